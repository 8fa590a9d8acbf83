// How long a watch waits after failures in a row: exponential from `initial`, capped at `max`,
// then jittered down to between half and all of that ("equal jitter"), so that every agent of a
// fleet that lost the API server at once does not come back in the same second.
#pragma once

#include <chrono>

namespace shimkeeper::kubeapi {

// failures == 0: no wait. unit_random in [0, 1]; passed in so tests can pin it.
std::chrono::milliseconds retry_backoff(unsigned failures, std::chrono::milliseconds initial,
                                        std::chrono::milliseconds max, double unit_random);

} // namespace shimkeeper::kubeapi
