// What the API server answered this process's one-shot requests, for its /metrics: the failures
// by verb (the HTTP method) and code ("none" when no answer came), and how long each request
// took, by verb, in histogram buckets. Recorded by Connection::perform from any thread (the
// coordinator's loop and its Lease renewal thread) and read by the metrics endpoint's thread:
// every access takes the mutex. Watches are long requests on the event loop and are not timed.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace shimkeeper::kubeapi {

// Upper bounds in seconds (Prometheus `le`), from a local read to a request near its bound.
inline constexpr std::array<double, 11> k_request_seconds_buckets = {
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15};

struct LatencyHistogram {
    std::array<std::uint64_t, k_request_seconds_buckets.size()> at_most{}; // cumulative
    std::uint64_t count = 0;
    double sum_seconds = 0;
};

struct RequestTally {
    // (verb, code) -> requests answered with that code (>= 400) or not answered ("none").
    std::map<std::pair<std::string, std::string>, std::uint64_t> errors;
    std::map<std::string, LatencyHistogram> latency; // by verb
};

class RequestStats {
public:
    // http_code 0: no answer (a transport failure).
    void record(const char* verb, long http_code, std::chrono::duration<double> took);
    RequestTally tally() const;

private:
    mutable std::mutex m_mutex;
    RequestTally m_tally;
};

} // namespace shimkeeper::kubeapi
