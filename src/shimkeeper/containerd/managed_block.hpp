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
std::string adopted_prefix(std::string_view shim);

// A line shimkeeper commented out for `shim` ("#shimkeeper:adopted:<shim># <user's line>"): the
// one parser of what adopted_prefix writes.
struct AdoptedLine {
    std::string_view shim;
    std::string_view original; // the user's line as it was, line ending included
};
std::optional<AdoptedLine> parse_adopted(std::string_view line);
std::string created_marker(std::string_view base_sha256_hex);

// Blocks in file order. Errors name the line of a begin without end, an end without begin, or
// nested blocks, and say how to repair the file.
util::Expected<std::vector<ManagedBlock>> find_blocks(const std::vector<std::string>& lines,
                                                      const std::string& label);

// The base hash when the first line is a created marker.
std::optional<std::string> created_base_hash(const std::vector<std::string>& lines);

// The block's lines, each ending with eol.
std::vector<std::string> render_block(std::string_view shim, std::string_view digest_hex,
                                      const KeyPath& handler_path, const toml::table& runtime,
                                      std::string_view eol);

} // namespace shimkeeper::containerd
