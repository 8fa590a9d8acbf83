// Checks an edit before anything is written: re-parses the result with toml++ and compares it
// with what was meant, so that neither a bug nor a strange input file can produce a config that
// holds more or less than the intended change.
#pragma once

#include "shimkeeper/containerd/toml_text.hpp"
#include "shimkeeper/util/error.hpp"

#include <set>
#include <string>
#include <toml++/toml.h>
#include <utility>
#include <vector>

namespace shimkeeper::containerd {

// The user's own content: every managed block removed, every adopted line restored (except those
// adopted by the shims in `keep_adopted`, which stay commented out) by restore_adopted, the one
// parser of adopted lines (managed_block.hpp), and a missing final line ending added.
std::vector<std::string> user_lines(const std::vector<std::string>& lines, Masking masking,
                                    const std::set<std::string>& keep_adopted = {});

struct IntendedRuntime {
    KeyPath path; // <runtimes>.<handler>
    toml::table value;
};

// before/after are whole file texts; masking as for the edit; blocks names every shim the edit
// keeps (their adopted lines stay commented out), the same set the edit restored with.
util::Expected<void> check_edit(const std::string& before, const std::string& after,
                                Masking masking, const std::vector<IntendedRuntime>& intended,
                                const std::set<std::string>& blocks, const std::string& label);

} // namespace shimkeeper::containerd
