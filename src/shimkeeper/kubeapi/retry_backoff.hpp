// How long a watch waits after failures in a row: exponential from `initial`, capped at `max`,
// then jittered down to between half and all of that ("equal jitter"), so that every agent of a
// fleet that lost the API server at once does not come back in the same second.
#pragma once

#include <chrono>

namespace shimkeeper::kubeapi {

// failures == 0: no wait. unit_random in [0, 1]; passed in so tests can pin it.
std::chrono::milliseconds retry_backoff(unsigned failures, std::chrono::milliseconds initial,
                                        std::chrono::milliseconds max, double unit_random);

// How long a request refused with 429 waits before it asks again: the server's Retry-After
// (seconds, at most 2; 1 when it gives none or nonsense), and up to as much again by
// `unit_random` in [0, 1]. The API server sheds a burst with the same Retry-After to everyone
// it refuses: a thousand agents woken by one Shim edit that all asked again exactly a second
// later would be refused together again.
std::chrono::milliseconds throttle_wait(long retry_after_seconds, double unit_random);

} // namespace shimkeeper::kubeapi
