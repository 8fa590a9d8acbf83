// The one way shimkeeper writes "now" into its records (journal, lock holder): RFC 3339, UTC,
// whole seconds.
#pragma once

#include <string>

namespace shimkeeper::util {

std::string now_rfc3339(); // "2026-11-23T19:41:20Z"

} // namespace shimkeeper::util
