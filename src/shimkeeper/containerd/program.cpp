#include "shimkeeper/containerd/program.hpp"

#include "shimkeeper/util/fd.hpp"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

extern char** environ;

namespace shimkeeper::containerd {

namespace {

struct SpawnActions {
    posix_spawn_file_actions_t actions{};
    SpawnActions() { ::posix_spawn_file_actions_init(&actions); }
    ~SpawnActions() { ::posix_spawn_file_actions_destroy(&actions); }
    SpawnActions(const SpawnActions&) = delete;
    SpawnActions& operator=(const SpawnActions&) = delete;
};

int decode_status(int status) {
    if (WIFEXITED(status)) {
        return WEXITSTATUS(status);
    }
    return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 255;
}

} // namespace

util::Expected<ProgramResult> run_program(const std::vector<std::string>& argv,
                                          std::chrono::milliseconds timeout) {
    using util::Error;
    using util::ErrorCode;
    if (argv.empty()) {
        return util::fail(ErrorCode::internal, "run_program: empty argv");
    }
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) {
        return std::unexpected(Error::from_errno(ErrorCode::io, "cannot create a pipe", errno));
    }
    util::Fd read_end(pipe_fds[0]);
    util::Fd write_end(pipe_fds[1]);

    SpawnActions spawn;
    ::posix_spawn_file_actions_addopen(&spawn.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_adddup2(&spawn.actions, write_end.get(), STDOUT_FILENO);
    ::posix_spawn_file_actions_adddup2(&spawn.actions, write_end.get(), STDERR_FILENO);

    std::vector<char*> args;
    for (const auto& arg : argv) {
        args.push_back(const_cast<char*>(arg.c_str()));
    }
    args.push_back(nullptr);
    pid_t pid = 0;
    int rc = ::posix_spawn(&pid, argv[0].c_str(), &spawn.actions, nullptr, args.data(), environ);
    if (rc != 0) {
        return std::unexpected(
            Error::from_errno(rc == ENOENT ? ErrorCode::not_found : ErrorCode::external,
                              "cannot run " + argv[0], rc));
    }
    write_end.reset();

    ProgramResult result;
    auto deadline = std::chrono::steady_clock::now() + timeout;
    bool timed_out = false;
    char buffer[8192];
    for (;;) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd pfd{read_end.get(), POLLIN, 0};
        int ready = ::poll(&pfd, 1, static_cast<int>(left.count()));
        if (ready < 0 && errno == EINTR) {
            continue;
        }
        if (ready <= 0) {
            timed_out = ready == 0;
            break;
        }
        ssize_t n = ::read(read_end.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            break;
        }
        result.output.append(buffer, static_cast<std::size_t>(n));
    }
    if (timed_out) {
        ::kill(pid, SIGKILL);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (timed_out) {
        return util::fail(ErrorCode::external, argv[0] + " did not finish within " +
                                                   std::to_string(timeout.count()) +
                                                   " ms and was killed");
    }
    result.exit_code = decode_status(status);
    return result;
}

} // namespace shimkeeper::containerd
