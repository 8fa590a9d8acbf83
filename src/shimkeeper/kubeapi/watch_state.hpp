// The decisions of a watch, apart from any I/O so that they are unit-tested line by line:
//   list (paged) -> a `synced` snapshot -> watch from the list's resourceVersion with bookmarks;
//   each event and bookmark moves the resourceVersion on;
//   the server ends the watch after timeoutSeconds (randomised, so a fleet's watches do not all
//   rotate together) -> watch again from where we are, no re-list;
//   410 Gone (as the HTTP answer or as an ERROR event) -> the history we need is compacted away:
//   re-list at once, and the consumer gets a fresh snapshot;
//   any other failure -> the same request again after a jittered, growing backoff.
// With stream_initial, the list is the watch's own beginning instead (a "watch list", Kubernetes
// 1.27+, on by default from 1.34): one request, whose stream starts with the collection as ADDED
// events and a bookmark marked k8s.io/initial-events-end, then goes on as a watch from there. A
// server that refuses the parameters (400, or 422 where the WatchList gate is off, as in 1.33)
// gets list + watch from then on.
#pragma once

#include "shimkeeper/kubeapi/api_error.hpp"

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace shimkeeper::kubeapi {

struct WatchSettings {
    std::string label_selector;
    std::string field_selector;
    long page_limit = 500;
    std::chrono::seconds min_timeout{300}; // each watch asks for [min, 2 min) seconds
    std::chrono::milliseconds backoff_initial{800};
    std::chrono::milliseconds backoff_max{30'000};
    // Start watching at this resourceVersion (a bookmark kept from an earlier run) instead of
    // listing first; a 410 falls back to a list.
    std::string resume_from;
    // For a watch that is closed while its stream runs: HTTP/1.1 on a connection of its own, which
    // closing the watch closes, so the API server ends it at once. Multiplexed over HTTP/2, the
    // stream's reset waited for other traffic on the connection (libcurl 7.88): the server kept
    // the watch about 40 s after its agent closed it.
    bool own_connection = false;
    // Open with a watch that streams the collection first (above) instead of a list: one request
    // and, with own_connection, one connection instead of two.
    bool stream_initial = false;
    // How long a watch request may wait for the response's status line (the API server sends it
    // as the stream starts). A peer that took the request and stays silent (a load balancer that
    // lost the connection, a half-dead HTTP/2 connection) would otherwise hold the watch for the
    // stream's whole transfer timeout, more than ten minutes; the next request goes out on a
    // fresh connection. A list page is bounded whole (60 s) instead.
    std::chrono::milliseconds header_wait{30'000};
};

struct WatchEvent {
    enum class Kind { synced, added, modified, deleted };
    Kind kind = Kind::synced;
    nlohmann::json object;             // added, modified, deleted
    std::vector<nlohmann::json> items; // synced: the whole current set, replacing what was known
};

class WatchState {
public:
    // initial: a watch whose stream begins with the collection (stream_initial).
    enum class Phase { list, initial, watch };

    WatchState(WatchSettings settings, std::uint32_t seed);

    Phase phase() const { return m_phase; }
    const std::string& resource_version() const { return m_resource_version; }
    std::chrono::milliseconds delay() const { return m_delay; } // before the next request
    unsigned failures() const { return m_failures; }
    unsigned lists_started() const { return m_lists; }
    unsigned watches_started() const { return m_watches; }
    const std::string& last_problem() const { return m_last_problem; }
    // Whether the next request is a stream (a watch, or one that begins with the collection).
    bool streams() const { return m_phase != Phase::list; }
    // The API server refused the last request (HTTP 401 or 403) and nothing succeeded since: the
    // credential may not do this, and retrying will not change that by itself.
    bool refused() const { return m_refused; }

    // The query of the next request (list page or watch). Counts a list started.
    std::string next_query();

    // A list page's body (a 200): the snapshot when it was the last page.
    std::optional<WatchEvent> on_list_page(std::string_view body);

    struct LineOutcome {
        std::optional<WatchEvent> event;
        bool restart = false; // abandon this stream; the next request is decided already
    };
    // One line of a watch stream (a JSON object: type + object). While the stream sends the
    // collection (Phase::initial) its ADDED events are gathered, and the bookmark that ends them
    // is the `synced` snapshot.
    LineOutcome on_watch_line(std::string_view line);

    // The server ended the watch normally (before the collection was whole: it is asked again). A
    // stream closed at once and empty counts as a failure (no hot loop against a server that
    // answers and hangs up).
    void on_stream_end(std::chrono::milliseconds lasted, bool had_lines);
    void on_http_error(const ApiStatus& status);
    void on_transport_error(std::string problem);

private:
    void relist();
    Phase first_phase() const { return m_settings.stream_initial ? Phase::initial : Phase::list; }
    std::optional<WatchEvent> on_initial_line(const std::string& type, nlohmann::json& object);
    void failed(std::string problem);
    void succeeded();

    WatchSettings m_settings;
    std::minstd_rand m_rng;
    Phase m_phase = Phase::list;
    std::string m_resource_version;
    std::string m_continue;
    std::vector<nlohmann::json> m_items; // pages (or initial events) so far
    unsigned m_failures = 0;
    unsigned m_lists = 0;
    unsigned m_watches = 0;
    std::chrono::milliseconds m_delay{0};
    std::string m_last_problem;
    bool m_refused = false;
};

} // namespace shimkeeper::kubeapi
