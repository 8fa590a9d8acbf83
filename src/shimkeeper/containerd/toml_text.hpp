// A line-level view of a TOML file, enough to edit it without reformatting it.
//
// toml++ gives the meaning of a file but not its layout, so edits are made on lines: the file is
// split into lines that keep their own endings (joining them gives back the exact bytes), and a
// small scanner finds where each table header and key/value statement starts and ends. The scanner
// understands strings (all four kinds), arrays and inline tables spanning lines, and comments; it
// assumes the text already parsed with toml++ and never needs to report TOML errors itself.
//
// Go-template files (k3s/rke2 `config.toml.tmpl`) are masked first: every line holding `{{` is
// turned into a comment, so that toml++ and the scanner see the TOML around the template actions
// while the line count, and so every line number, stays the same.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <vector>

namespace shimkeeper::containerd {

using KeyPath = std::vector<std::string>;

// Each element holds one line including its ending ("\n", "\r\n" or none for an unterminated
// last line).
std::vector<std::string> split_lines(std::string_view text);
std::string join_lines(const std::vector<std::string>& lines);
// The line without its ending.
std::string_view line_body(std::string_view line);
// "\r\n" when the file's first line ends that way, else "\n".
std::string dominant_line_ending(const std::vector<std::string>& lines);

enum class Masking { none, go_template };
// Lines holding "{{" become comments ("#" prepended) when masking is go_template.
std::vector<std::string> mask_lines(const std::vector<std::string>& lines, Masking masking);

enum class StatementKind { table, array_table, key_value };

struct Statement {
    StatementKind kind = StatementKind::key_value;
    std::size_t first_line = 0; // 0-based, inclusive
    std::size_t last_line = 0;
    KeyPath path; // full key path: the header's path, or the enclosing table + the dotted key
};

// Headers and key/values of a file that toml++ accepted, in order.
util::Expected<std::vector<Statement>> scan_statements(std::string_view text,
                                                       const std::string& label);

// For each line, whether it continues a statement begun on an earlier line: it starts inside a
// multi-line string, or inside an array spanning lines. Such a line belongs to a value, so nothing
// on it is a table header, a key or one of shimkeeper's marker comments, whatever it looks like.
// The lines are read as toml++ reads them (masked first); text the scanner cannot read gives
// false for every line.
std::vector<bool> continuation_lines(const std::vector<std::string>& lines, Masking masking);

// Parses TOML text; the error names label and the line, and says to fix the file.
util::Expected<toml::table> parse_toml(std::string_view text, const std::string& label);

// "a.\"b.c\".d"
std::string render_path(const KeyPath& path);

bool starts_with(const KeyPath& path, const KeyPath& prefix);

} // namespace shimkeeper::containerd
