#include "shimkeeper/util/chroot.hpp"

#include <cerrno>
#include <sys/stat.h>

namespace shimkeeper::util {

bool inside_chroot(const std::filesystem::path& init_root, const std::filesystem::path& own_root) {
    struct stat own {};
    if (::stat(own_root.c_str(), &own) != 0) {
        return false;
    }
    struct stat init {};
    if (::stat(init_root.c_str(), &init) != 0) {
        return errno == ENOENT; // no /proc: not a running system
    }
    return own.st_dev != init.st_dev || own.st_ino != init.st_ino;
}

} // namespace shimkeeper::util
