#include "shimkeeper/containerd/edit_check.hpp"

#include "shimkeeper/containerd/managed_block.hpp"
#include "shimkeeper/containerd/toml_tree.hpp"

namespace shimkeeper::containerd {

namespace {

bool nodes_equal(const toml::node& a, const toml::node& b) {
    // toml++ compares whole arrays and tables deeply, not single nodes: wrap them.
    toml::array left;
    left.push_back(a);
    toml::array right;
    right.push_back(b);
    return left == right;
}

// A key path where a and b differ, or nullopt when they are equal.
std::optional<KeyPath> first_difference(const toml::table& a, const toml::table& b,
                                        const KeyPath& at) {
    for (const auto& [key, value] : a) {
        KeyPath path = at;
        path.emplace_back(key.str());
        const toml::node* other = b.get(key);
        if (other == nullptr) {
            return path;
        }
        if (value.is_table() && other->is_table()) {
            if (auto diff = first_difference(*value.as_table(), *other->as_table(), path)) {
                return diff;
            }
        } else if (!nodes_equal(value, *other)) {
            return path;
        }
    }
    for (const auto& [key, value] : b) {
        if (!a.contains(key.str())) {
            KeyPath path = at;
            path.emplace_back(key.str());
            return path;
        }
    }
    return std::nullopt;
}

std::unexpected<util::Error> broken(const std::string& label, const std::string& what) {
    return util::fail(util::ErrorCode::internal,
                      label + ": the edited file would not hold exactly the intended change (" +
                          what + "); nothing was written. Please report this with the file.");
}

} // namespace

std::vector<std::string> user_lines(const std::vector<std::string>& lines, Masking masking,
                                    const std::set<std::string>& keep_adopted) {
    std::vector<std::string> out;
    auto blocks = find_blocks(lines, "", masking);
    std::size_t next_block = 0;
    for (std::size_t i = 0; i < lines.size(); ++i) {
        if (blocks && next_block < blocks->size() && i >= (*blocks)[next_block].first_line) {
            if (i == (*blocks)[next_block].last_line) {
                ++next_block;
            }
            continue;
        }
        out.push_back(lines[i]);
    }
    // The same restoration as the edit's (managed_block.hpp has the grammar).
    out = restore_adopted(out, keep_adopted, masking);
    if (!out.empty() && !out.back().ends_with('\n')) {
        out.back() += dominant_line_ending(lines);
    }
    return out;
}

util::Expected<void> check_edit(const std::string& before, const std::string& after,
                                Masking masking, const std::vector<IntendedRuntime>& intended,
                                const std::set<std::string>& blocks, const std::string& label) {
    auto before_user = user_lines(split_lines(before), masking);
    auto after_user = user_lines(split_lines(after), masking);
    // The one change allowed outside the blocks: a final line ending added before a block.
    auto chomp = [](std::string text) {
        std::string_view body = line_body(text);
        text.resize(body.size());
        return text;
    };
    if (chomp(join_lines(before_user)) != chomp(join_lines(after_user))) {
        std::size_t i = 0;
        while (i < before_user.size() && i < after_user.size() && before_user[i] == after_user[i]) {
            ++i;
        }
        return broken(label,
                      "text outside the managed blocks changed near line " + std::to_string(i + 1));
    }

    auto after_tree = parse_toml(join_lines(mask_lines(split_lines(after), masking)), label);
    if (!after_tree) {
        return util::fail(util::ErrorCode::conflict,
                          "adding shimkeeper's runtime tables would make the file invalid TOML: " +
                              after_tree.error().message() +
                              " (shimkeeper never reformats a file; look for the same table or "
                              "key written elsewhere, e.g. as an inline table or dotted key)");
    }
    auto expected = TRY(parse_toml(
        join_lines(mask_lines(user_lines(split_lines(before), masking, blocks), masking)), label));
    for (const auto& runtime : intended) {
        erase_node(expected, runtime.path);
        assign_node(expected, runtime.path, runtime.value);
    }
    prune_empty_tables(expected);
    prune_empty_tables(*after_tree);
    if (auto diff = first_difference(expected, *after_tree, {})) {
        return broken(label, "key " + render_path(*diff) + " differs from what was intended");
    }
    return {};
}

} // namespace shimkeeper::containerd
