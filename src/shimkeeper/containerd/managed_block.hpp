// The managed blocks shimkeeper keeps in a containerd config file, one per shim.
//
// Format (each marker is a TOML comment on its own line, in the file's own line endings):
//
//   # shimkeeper:begin shim=<shim-name> digest=sha256:<hex> (managed by shimkeeper; edits here are
//   replaced)
//   [<cri>.containerd.runtimes.<handler>]
//     runtime_type = "..."
//   [<cri>.containerd.runtimes.<handler>.options]
//     SystemdCgroup = true
//   # shimkeeper:end shim=<shim-name>
//
// Everything between the markers belongs to shimkeeper; everything outside is the user's and is
// never changed, with two exceptions that the user asks for:
//   - `adopt = true`: the user's own definition of the handler is commented out, each line
//     prefixed with "#shimkeeper:adopted:<shim># ", and restored when that shim is removed;
//   - a file shimkeeper created starts with "# shimkeeper:created base-sha256=<hex>", the hash of
//     the content it was created with; once the last block is gone and the rest still hashes to
//     that, the file is deleted again.
#pragma once

#include "shimkeeper/containerd/toml_text.hpp"
#include "shimkeeper/util/error.hpp"

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <vector>

namespace shimkeeper::containerd {

struct ManagedBlock {
    std::string shim;
    std::string digest;     // as written after "digest=" ("sha256:<hex>" or "unknown")
    std::size_t first_line; // the begin marker, 0-based
    std::size_t last_line;  // the end marker
};

std::string begin_marker(std::string_view shim, std::string_view digest_hex);
std::string end_marker(std::string_view shim);
// Adopted lines: the user's definition of a handler that an `adopt = true` shim took over,
// commented out line by line. The grammar (one line at a time, line ending included; nothing else
// in the file, not even TOML's strings, is looked at):
//
//   adopted-line = "#shimkeeper:adopted:" shim "# " user-line
//   shim         = a shim name (spec::is_valid_name: 1-63 of [a-z0-9._-], first and last
//                  [a-z0-9]); it need not name a shim that exists
//   user-line    = any bytes, up to and including the line's ending ("\n", "\r\n" or none at the
//                  end of a file), that do not hold a marker (below)
//
// The prefix starts in the first column. A line "holds a marker" when, after any spaces and tabs,
// it starts with "#shimkeeper:" or "# shimkeeper:": shimkeeper never comments out one of its own
// marker lines (adopt_line leaves such a line as it is), so a user-line holding one was not
// written by shimkeeper. Every line that is not an adopted-line (no separator, "#" without the
// space, an invalid name, an indented prefix, a marker inside another comment, repeated markers
// "#shimkeeper:adopted:a# #shimkeeper:adopted:b# x") is plainly the user's own text: kept byte
// for byte, never restored, never refused. An adopted-line whose user-line is empty stands for no
// line at all and is dropped when restored or kept. This is the one parser: writing (adopt_line),
// restoring (restore_adopted) and the engine's own check (user_lines) all go through it, so
// parse_adopted(adopt_line(s, l)) gives back l for every line l that adopt_line wraps.
std::string adopted_prefix(std::string_view shim);

// After any spaces and tabs, the line starts with "#shimkeeper:" or "# shimkeeper:".
bool holds_marker(std::string_view line);

struct AdoptedLine {
    std::string_view shim;
    std::string_view original; // the user's line as it was, line ending included (maybe empty)
};
// The adopted-line, or nullopt for any other bytes.
std::optional<AdoptedLine> parse_adopted(std::string_view line);

// The line commented out for `shim`; a line holding a marker (or empty) is returned as it is.
std::string adopt_line(std::string_view shim, std::string_view line);

// The lines with every adopted-line of a shim not in `keep` replaced by its user-line, and every
// adopted-line whose user-line is empty dropped.
// Only lines at statement level count: a look-alike inside a multi-line string or array is the
// value's text (continuation_lines in toml_text.hpp).
std::vector<std::string> restore_adopted(const std::vector<std::string>& lines,
                                         const std::set<std::string>& keep, Masking masking);

std::string created_marker(std::string_view base_sha256_hex);

// Blocks in file order. Errors name the line of a begin without end, an end without begin, or
// nested blocks, and say how to repair the file.
// Marker lines count only at statement level, as for restore_adopted.
util::Expected<std::vector<ManagedBlock>> find_blocks(const std::vector<std::string>& lines,
                                                      const std::string& label, Masking masking);

// The base hash when the first line is a created marker.
std::optional<std::string> created_base_hash(const std::vector<std::string>& lines);

// The block's lines, each ending with eol.
std::vector<std::string> render_block(std::string_view shim, std::string_view digest_hex,
                                      const KeyPath& handler_path, const toml::table& runtime,
                                      std::string_view eol);

} // namespace shimkeeper::containerd
