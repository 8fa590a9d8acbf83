// Runs a freshly unpacked shim once (`<binary> -v`) before it is committed to the store, so that
// a binary for the wrong architecture or libc fails the fetch instead of the first pod.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <chrono>
#include <filesystem>
#include <string>

namespace shimkeeper::store {

// The output is cut after this many bytes (stdout and stderr interleaved).
inline constexpr std::size_t k_preflight_output_limit = 4096;

struct PreflightResult {
    int exit_status = 0;    // exit code, or 128 + signal number
    std::string output;     // stdout + stderr, truncated to k_preflight_output_limit
    bool timed_out = false; // killed after the timeout (exit_status is then 128 + SIGKILL)
};

// Runs `<binary> -v` with an environment holding only PATH=/usr/sbin:/usr/bin:/sbin:/bin,
// stdin from /dev/null, in "/" and in a new process group that is killed after `timeout`.
// Before exec, an ELF built for another machine is refused ("built for aarch64, this node is
// x86_64"). Failing to exec (no such interpreter, unknown format, not executable) is an Error
// naming the cause. A non-zero exit or a timeout is NOT an error: the caller warns from the
// result, because some shims have no -v flag.
util::Expected<PreflightResult> preflight(const std::filesystem::path& binary,
                                          std::chrono::milliseconds timeout);

} // namespace shimkeeper::store
