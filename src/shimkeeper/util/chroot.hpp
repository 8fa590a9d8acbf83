// Is this process in a chroot (an image root entered from outside) rather than at the root of
// the running system? `bake --root /` is accepted only there: Ansible's chroot connection and
// Packer's chroot builders run commands inside the image, where the image root is "/".
// The kernel tells: /proc/1/root is the root of PID 1, the running system's init. A chroot that
// mounted the host's /proc sees another root there than its own; a root without /proc at all is
// no running system (systemd cannot run without it).
#pragma once

#include <filesystem>

namespace shimkeeper::util {

// `init_root` and `own_root` are parameters for the tests. When unsure (/proc/1/root not
// readable: a sandbox without ptrace rights over PID 1) the answer is false, the safe side for a
// caller that refuses to treat the running system's "/" as an image.
bool inside_chroot(const std::filesystem::path& init_root = "/proc/1/root",
                   const std::filesystem::path& own_root = "/");

} // namespace shimkeeper::util
