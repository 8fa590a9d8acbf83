// The STATUS= lines a person reads in `systemctl status shimkeeper`:
//   converged: 2 shims (spin, wasmtime), generation 4
//   failing: fetching spin-v2: HTTP 404 from https://...; retry in 40s
// systemd shows one line, so every text is flattened to one line and kept short.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace shimkeeper::daemon {

// Whitespace runs (newlines included) become one space; longer than max_chars -> cut, "...".
std::string one_line(std::string_view text, std::size_t max_chars = 200);

// A wait as a person says it, rounded up to whole seconds: "1s", "40s", "5m", "2m30s", "1h5m".
std::string duration_text(std::chrono::milliseconds duration);

// "converged: 2 shims (spin, wasmtime), generation 4"; "converged: no shims, generation 1".
// Meant for the reconcile callback's ReconcileOutcome::summary.
std::string converged_status(const std::vector<std::string>& handlers, std::uint64_t generation);

// "failing: <reason>; retry in 40s".
std::string failing_status(std::string_view reason, std::chrono::milliseconds retry_in);

} // namespace shimkeeper::daemon
