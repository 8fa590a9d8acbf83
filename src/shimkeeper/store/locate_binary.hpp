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

} // namespace shimkeeper::store
