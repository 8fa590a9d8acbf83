// The pure core of the config engine: given a file's text and the desired runtimes for it,
// the file's new text. No I/O; the fuzz target drives this directly.
//
// Blocks of desired shims are re-rendered where they stand, new ones are appended at the end of
// the file, blocks of shims no longer desired are deleted. Before returning, the result is checked
// (edit_check.hpp): the text outside the blocks is byte-identical and the parsed result holds
// exactly the intended runtimes with every other key unchanged. Anything that would need the
// user's own TOML to be reformatted is refused with the line to change.
#pragma once

#include "shimkeeper/containerd/runtime_entry.hpp"
#include "shimkeeper/containerd/toml_text.hpp"
#include "shimkeeper/util/error.hpp"

#include <string>
#include <string_view>
#include <toml++/toml.h>
#include <vector>

namespace shimkeeper::containerd {

// The name of the block that defines containerd's default "runc" runtime when the user's file
// does not (see config_edit.cpp); not a valid shim name, so it never collides with one.
inline constexpr std::string_view k_default_runtime_block = "@default-runtime";

struct EditTarget {
    std::string label;     // the file's node path, for messages
    KeyPath runtimes_path; // <cri>.containerd.runtimes
    Masking masking = Masking::none;
    Pointing pointing = Pointing::absolute_type;
    // The config that holds the default runtime and whose user-defined handlers must not be
    // overridden: the root config when editing a drop-in; nullptr means the edited file itself.
    const toml::table* root_config = nullptr;
    // The file is a drop-in merged into another config (containerd >= 2.0 imports, k0s).
    bool drop_in = false;
};

util::Expected<std::string> edit_config_text(std::string_view before, const EditTarget& target,
                                             const std::vector<DesiredRuntime>& desired);

} // namespace shimkeeper::containerd
