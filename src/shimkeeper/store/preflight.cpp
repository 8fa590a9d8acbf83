#include "shimkeeper/store/preflight.hpp"

#include "shimkeeper/store/elf_header.hpp"
#include "shimkeeper/util/fd.hpp"
#include "shimkeeper/util/fs.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <optional>
#include <poll.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace shimkeeper::store {

namespace fs = std::filesystem;

namespace {

// In the anonymous namespace, as node_lock.cpp's: in a unity batch with it, an alias at namespace
// scope would be shadowed by that one (clang's -Wshadow).
using Clock = std::chrono::steady_clock;

// Owns a spawned child until it is reaped: on an early return it is killed with its group.
class Child {
public:
    explicit Child(pid_t pid) : m_pid(pid) {}
    Child(const Child&) = delete;
    Child& operator=(const Child&) = delete;
    ~Child() {
        if (m_pid > 0) {
            kill_group();
            wait();
        }
    }
    pid_t pid() const { return m_pid; }
    void kill_group() const { ::kill(-m_pid, SIGKILL); }
    int wait() {
        int status = 0;
        while (::waitpid(m_pid, &status, 0) < 0 && errno == EINTR) {
        }
        m_pid = -1;
        if (WIFSIGNALED(status)) {
            return 128 + WTERMSIG(status);
        }
        return WEXITSTATUS(status);
    }

private:
    pid_t m_pid;
};

// The first line of a script, for "interpreter missing" messages.
std::string shebang_of(const fs::path& binary) {
    auto text = util::read_file(binary);
    if (!text || !text->starts_with("#!")) {
        return {};
    }
    return text->substr(2, text->find('\n') == std::string::npos ? std::string::npos
                                                                 : text->find('\n') - 2);
}

util::Error exec_failure(const fs::path& binary, int err, const std::optional<ElfInfo>& elf) {
    std::string what = "cannot run " + binary.string() + ": ";
    if (err == ENOENT && elf && elf->interpreter) {
        what += "its ELF interpreter " + *elf->interpreter +
                " does not exist on this node (built for another libc, such as musl, or another "
                "distribution); use a statically linked build";
    } else if (err == ENOENT && !shebang_of(binary).empty()) {
        what += "its interpreter '#!" + shebang_of(binary) + "' does not exist on this node";
    } else if (err == ENOEXEC) {
        what += "the kernel does not recognise it as a program (unknown format, a truncated "
                "ELF or a broken #! line); check that the URL serves the shim";
    } else if (err == EACCES) {
        what += "permission denied (not executable, or the store is on a noexec mount)";
    } else {
        what += std::strerror(err);
    }
    return util::Error(util::ErrorCode::archive, what, err);
}

void append_limited(std::string& output, const char* data, std::size_t size, bool& truncated) {
    std::size_t room = k_preflight_output_limit - std::min(output.size(), k_preflight_output_limit);
    output.append(data, std::min(room, size));
    truncated = truncated || size > room;
}

util::Expected<pid_t> spawn(const fs::path& binary, int output_fd) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&actions, output_fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, output_fd, STDERR_FILENO);
    posix_spawn_file_actions_addchdir_np(&actions, "/");
    sigset_t no_signals;
    sigset_t all_signals;
    sigemptyset(&no_signals);
    sigfillset(&all_signals);
    posix_spawnattr_setsigmask(&attributes, &no_signals);
    posix_spawnattr_setsigdefault(&attributes, &all_signals);
    posix_spawnattr_setpgroup(&attributes, 0);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                              POSIX_SPAWN_SETSIGDEF);
    std::string path = binary.string();
    std::string flag = "-v";
    std::string env_path = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
    std::array<char*, 3> argv{path.data(), flag.data(), nullptr};
    std::array<char*, 2> envp{env_path.data(), nullptr};
    pid_t pid = -1;
    int rc = ::posix_spawn(&pid, path.c_str(), &actions, &attributes, argv.data(), envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
    if (rc != 0) {
        // glibc reports the child's execve errno here (and has reaped the child).
        return std::unexpected(util::Error(util::ErrorCode::archive, "", rc));
    }
    return pid;
}

} // namespace

util::Expected<PreflightResult> preflight(const fs::path& binary,
                                          std::chrono::milliseconds timeout) {
    auto elf = TRY(read_elf_info(binary));
    if (elf && elf->machine != native_elf_machine()) {
        return util::fail(util::ErrorCode::archive,
                          binary.string() + " is built for " + elf_machine_name(elf->machine) +
                              ", this node is " + elf_machine_name(native_elf_machine()) +
                              "; point the shim's URL (or its [[shim.fetch.platform]] entry) at "
                              "the " +
                              elf_machine_name(native_elf_machine()) + " build");
    }
    std::array<int, 2> pipe_fds{};
    if (::pipe2(pipe_fds.data(), O_CLOEXEC) != 0) {
        return std::unexpected(
            util::Error::from_errno(util::ErrorCode::io, "cannot create a pipe", errno));
    }
    util::Fd read_end(pipe_fds[0]);
    util::Fd write_end(pipe_fds[1]);
    auto pid = spawn(binary, write_end.get());
    if (!pid) {
        return std::unexpected(exec_failure(binary, pid.error().sys_errno(), elf));
    }
    Child child(*pid);
    write_end.reset();
    util::Fd pidfd(static_cast<int>(::syscall(SYS_pidfd_open, child.pid(), 0)));
    if (!pidfd) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::internal, "pidfd_open (Linux 5.3 or newer is required)", errno));
    }
    PreflightResult result;
    bool truncated = false;
    bool exited = false;
    bool pipe_open = true;
    const auto deadline = Clock::now() + timeout;
    std::array<char, 4096> buffer{};
    while (!exited) {
        // Rounded up: a remainder below a millisecond is still time left, not a timeout (floored,
        // it killed the child before the deadline: seen as 299.85 ms of a 300 ms timeout).
        auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
        if (left.count() <= 0) {
            result.timed_out = true;
            break;
        }
        std::array<pollfd, 2> fds{pollfd{pidfd.get(), POLLIN, 0},
                                  pollfd{read_end.get(), POLLIN, 0}};
        // After the pipe's EOF only the pidfd is watched (a hung-up pipe would wake us forever).
        if (::poll(fds.data(), pipe_open ? 2 : 1, static_cast<int>(left.count())) < 0 &&
            errno != EINTR) {
            return std::unexpected(
                util::Error::from_errno(util::ErrorCode::io, "poll on preflight child", errno));
        }
        if (pipe_open && (fds[1].revents & (POLLIN | POLLHUP)) != 0) {
            ssize_t n = ::read(read_end.get(), buffer.data(), buffer.size());
            if (n > 0) {
                append_limited(result.output, buffer.data(), static_cast<std::size_t>(n),
                               truncated);
            } else if (n == 0 || errno != EINTR) {
                pipe_open = false;
            }
        }
        exited = (fds[0].revents & POLLIN) != 0;
    }
    // Whatever is left of the group (a forked daemon, or everything after a timeout) goes now.
    child.kill_group();
    result.exit_status = child.wait();
    ::fcntl(read_end.get(), F_SETFL, O_NONBLOCK);
    for (ssize_t n; (n = ::read(read_end.get(), buffer.data(), buffer.size())) > 0;) {
        append_limited(result.output, buffer.data(), static_cast<std::size_t>(n), truncated);
    }
    if (truncated) {
        result.output += "\n[output truncated]";
    }
    return result;
}

} // namespace shimkeeper::store
