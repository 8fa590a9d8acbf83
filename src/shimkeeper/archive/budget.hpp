// The unpack limits, enforced on the bytes actually written (a compression bomb's headers may
// claim anything), plus the entry count.
#pragma once

#include "shimkeeper/archive/unpack.hpp"
#include "shimkeeper/util/error.hpp"

#include <cstdint>
#include <string>

namespace shimkeeper::archive {

// libarchive reads and our writes go in blocks of this size.
inline constexpr std::size_t k_block_size = 64 * 1024;

// Running totals shared by every entry of one unpack.
class Budget {
public:
    explicit Budget(const UnpackLimits& limits) : m_limits(limits) {}

    // Adds `chunk` freshly written bytes of entry `path` (whose count so far is `entry_bytes`);
    // fails once the entry or the whole archive is over its limit.
    util::Expected<void> account(std::uint64_t& entry_bytes, std::size_t chunk,
                                 const std::string& path);

    const UnpackLimits& limits() const { return m_limits; }

private:
    const UnpackLimits& m_limits;
    std::uint64_t m_total = 0;
};

} // namespace shimkeeper::archive
