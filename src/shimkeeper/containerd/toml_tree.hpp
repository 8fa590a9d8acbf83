// Helpers on parsed toml++ trees, addressed by key path (keys may hold dots, so the string paths
// of toml::at_path do not fit).
#pragma once

#include "shimkeeper/containerd/toml_text.hpp"

#include <toml++/toml.h>

namespace shimkeeper::containerd {

const toml::node* find_node(const toml::table& root, const KeyPath& path);
const toml::table* find_table(const toml::table& root, const KeyPath& path);

// Removes the node at path; a missing path is fine.
void erase_node(toml::table& root, const KeyPath& path);

// Puts value at path, creating (or replacing non-table) parents as tables.
void assign_node(toml::table& root, const KeyPath& path, toml::table value);

// Removes every table that holds nothing (recursively), so that "[a]" written by a user and the
// implicit parent of a removed table compare equal.
void prune_empty_tables(toml::table& table);

// One value as TOML text on a single line (strings as basic strings with escapes).
std::string format_value(const toml::node& value);

} // namespace shimkeeper::containerd
