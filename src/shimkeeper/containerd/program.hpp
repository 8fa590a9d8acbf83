// Runs containerd's own binary for facts only it knows (`--version`, `config default`,
// `config dump`). A process edge: stdout and stderr are captured together, so that an error
// message from containerd reaches the user as containerd wrote it.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <chrono>
#include <string>
#include <vector>

namespace shimkeeper::containerd {

struct ProgramResult {
    int exit_code = 0;  // 128 + signal when killed by one
    std::string output; // stdout and stderr, interleaved
};

// argv[0] is a path (no PATH search). Kills the program once the timeout expires and reports
// that as an error.
util::Expected<ProgramResult> run_program(const std::vector<std::string>& argv,
                                          std::chrono::milliseconds timeout);

} // namespace shimkeeper::containerd
