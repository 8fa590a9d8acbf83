// Removes a temp file or tree when the scope ends, whatever happened, unless release()d: the
// downloads and staging folders under the store's tmp/ never outlive a failure.
#pragma once

#include "shimkeeper/util/fs.hpp"

#include <filesystem>
#include <utility>

namespace shimkeeper::util {

class RemoveOnExit {
public:
    explicit RemoveOnExit(std::filesystem::path path) : m_path(std::move(path)) {}
    RemoveOnExit(const RemoveOnExit&) = delete;
    RemoveOnExit& operator=(const RemoveOnExit&) = delete;
    ~RemoveOnExit() {
        if (!m_path.empty()) {
            (void)util::remove_all(m_path);
        }
    }
    void release() { m_path.clear(); }

private:
    std::filesystem::path m_path;
};

} // namespace shimkeeper::util
