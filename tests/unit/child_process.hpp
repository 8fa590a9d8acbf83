// Ending a child process a unit test started (an artifact server, a containerd).
#pragma once

#include <chrono>
#include <csignal>
#include <sys/types.h>
#include <sys/wait.h>
#include <thread>

namespace shimkeeper::testing {

// SIGTERM, then SIGKILL if the child has not ended within `grace`, and reaped either way: a child
// that missed its SIGTERM once left a test hanging in waitpid.
inline void stop_child(pid_t pid, std::chrono::milliseconds grace) {
    ::kill(pid, SIGTERM);
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (::waitpid(pid, &status, WNOHANG) == 0) {
        if (std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, &status, 0);
            return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

} // namespace shimkeeper::testing
