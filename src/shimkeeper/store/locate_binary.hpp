// Finding the declared shim binary inside an unpacked artifact.
#pragma once

#include "shimkeeper/archive/unpack.hpp"
#include "shimkeeper/util/error.hpp"

#include <filesystem>
#include <string>

namespace shimkeeper::store {

// The path (relative to `dir`) of the declared binary: a regular executable file named
// `binary` at the top level, else the only file of that name anywhere below. Fails
// (ErrorCode::archive) when it is missing, ambiguous, not a regular file or not executable,
// listing what the artifact holds (the first 20 entries) so the user can fix `binary =`.
util::Expected<std::string> locate_binary(const archive::UnpackResult& unpacked,
                                          const std::filesystem::path& dir,
                                          const std::string& binary);

// For a shim whose runtime type the artifact says (a Shim object without runtimeType or binary):
// the file name of the one executable named containerd-shim-<name>-v<N> in the archive, or when
// it holds several, of the one whose <name> is `handler`. Fails (ErrorCode::archive) listing the
// artifact's entries when no name says it or the choice is ambiguous, and for a bare executable,
// which carries no name of its own.
util::Expected<std::string> binary_saying_runtime_type(const archive::UnpackResult& unpacked,
                                                       const std::string& handler);

} // namespace shimkeeper::store
