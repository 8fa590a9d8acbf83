// Small helpers that make text output readable.
#pragma once

#include <cstdint>
#include <string>

namespace shimkeeper::cli {

// "sha256:0123456789ab" for text output; json always carries the full digest.
std::string short_digest(const std::string& digest);
// "12.3 MiB"
std::string human_size(std::uint64_t bytes);

} // namespace shimkeeper::cli
