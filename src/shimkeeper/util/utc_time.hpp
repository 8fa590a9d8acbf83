// The one way shimkeeper writes a time into its records (journal, lock holder, status file,
// Node annotations): RFC 3339, UTC, whole seconds.
#pragma once

#include <chrono>
#include <string>

namespace shimkeeper::util {

std::string rfc3339(std::chrono::system_clock::time_point time); // "2026-11-23T19:41:20Z"
std::string now_rfc3339();

} // namespace shimkeeper::util
