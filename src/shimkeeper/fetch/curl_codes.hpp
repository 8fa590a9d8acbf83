// Maps libcurl's result codes onto the retry policy's failure kinds, at the curl edge.
#pragma once

#include "shimkeeper/fetch/retry_policy.hpp"

#include <curl/curl.h>

namespace shimkeeper::fetch {

FailureKind failure_kind_for(CURLcode code);

} // namespace shimkeeper::fetch
