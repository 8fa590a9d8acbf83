#include "shimkeeper/archive/budget.hpp"

namespace shimkeeper::archive {

util::Expected<void> Budget::account(std::uint64_t& entry_bytes, std::size_t chunk,
                                     const std::string& path) {
    entry_bytes += chunk;
    m_total += chunk;
    if (entry_bytes > m_limits.max_entry_size) {
        return util::fail(util::ErrorCode::archive,
                          "entry '" + path + "' unpacks to more than the limit of " +
                              std::to_string(m_limits.max_entry_size) + " bytes");
    }
    if (m_total > m_limits.max_total_size) {
        return util::fail(util::ErrorCode::archive,
                          "the archive unpacks to more than the limit of " +
                              std::to_string(m_limits.max_total_size) +
                              " bytes in total (reached at entry '" + path + "')");
    }
    return {};
}

} // namespace shimkeeper::archive
