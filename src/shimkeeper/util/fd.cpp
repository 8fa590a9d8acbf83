#include "shimkeeper/util/fd.hpp"

#include <unistd.h>

namespace shimkeeper::util {

void Fd::reset(int fd) {
    if (m_fd >= 0) {
        ::close(m_fd);
    }
    m_fd = fd;
}

} // namespace shimkeeper::util
