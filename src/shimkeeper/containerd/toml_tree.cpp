#include "shimkeeper/containerd/toml_tree.hpp"

#include <sstream>

namespace shimkeeper::containerd {

const toml::node* find_node(const toml::table& root, const KeyPath& path) {
    const toml::node* node = &root;
    for (const auto& key : path) {
        const toml::table* table = node->as_table();
        if (table == nullptr) {
            return nullptr;
        }
        node = table->get(key);
        if (node == nullptr) {
            return nullptr;
        }
    }
    return node;
}

const toml::table* find_table(const toml::table& root, const KeyPath& path) {
    const toml::node* node = find_node(root, path);
    return node != nullptr ? node->as_table() : nullptr;
}

void erase_node(toml::table& root, const KeyPath& path) {
    if (path.empty()) {
        return;
    }
    KeyPath parent(path.begin(), path.end() - 1);
    if (auto* table = const_cast<toml::table*>(find_table(root, parent))) {
        table->erase(path.back());
    }
}

void assign_node(toml::table& root, const KeyPath& path, toml::table value) {
    toml::table* table = &root;
    for (std::size_t i = 0; i + 1 < path.size(); ++i) {
        toml::node* child = table->get(path[i]);
        if (child == nullptr || !child->is_table()) {
            table->insert_or_assign(path[i], toml::table{});
            child = table->get(path[i]);
        }
        table = child->as_table();
    }
    table->insert_or_assign(path.back(), std::move(value));
}

void prune_empty_tables(toml::table& table) {
    for (auto it = table.begin(); it != table.end();) {
        if (auto* child = it->second.as_table()) {
            prune_empty_tables(*child);
            if (child->empty()) {
                it = table.erase(it);
                continue;
            }
        }
        ++it;
    }
}

std::string format_value(const toml::node& value) {
    std::ostringstream out;
    if (const auto* table = value.as_table()) {
        toml::table copy = *table;
        copy.is_inline(true);
        out << toml::toml_formatter{copy, toml::format_flags::none};
    } else {
        out << toml::toml_formatter{value, toml::format_flags::none};
    }
    return out.str();
}

} // namespace shimkeeper::containerd
