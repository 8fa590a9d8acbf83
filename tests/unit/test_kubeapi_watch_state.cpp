// The watch's decisions without I/O: list -> snapshot -> watch from the list's resourceVersion,
// bookmarks, rotation without a re-list, 410 -> re-list, jittered backoff on failures.
#include "shimkeeper/kubeapi/retry_backoff.hpp"
#include "shimkeeper/kubeapi/watch_state.hpp"

#include <gtest/gtest.h>

namespace {
namespace kubeapi_watch_state {

using namespace shimkeeper::kubeapi;
using namespace std::chrono_literals;
using Kind = WatchEvent::Kind;

WatchState make_state(WatchSettings settings = {}) {
    settings.label_selector = "app=w";
    settings.page_limit = 2;
    settings.min_timeout = 10s;
    return WatchState(settings, 42);
}

// Lists one page holding `names`, the last one, at resourceVersion `version`.
std::optional<WatchEvent> list_last_page(WatchState& state, std::string_view version) {
    state.next_query();
    return state.on_list_page(R"({"metadata":{"resourceVersion":")" + std::string(version) +
                              R"("},"items":[{"metadata":{"name":"a"}}]})");
}

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

TEST(KubeWatchState, PagedListThenWatchFromItsVersion) {
    auto state = make_state();
    EXPECT_EQ(state.next_query(), "?labelSelector=app%3Dw&limit=2");
    auto first = state.on_list_page(
        R"({"metadata":{"continue":"c1"},"items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b"}}]})");
    EXPECT_FALSE(first);
    EXPECT_EQ(state.phase(), WatchState::Phase::list);
    EXPECT_EQ(state.next_query(), "?labelSelector=app%3Dw&limit=2&continue=c1");
    auto synced = state.on_list_page(
        R"({"metadata":{"resourceVersion":"17"},"items":[{"metadata":{"name":"c"}}]})");
    ASSERT_TRUE(synced);
    EXPECT_EQ(synced->kind, Kind::synced);
    EXPECT_EQ(synced->items.size(), 3u);
    EXPECT_EQ(state.lists_started(), 1u);
    EXPECT_EQ(state.phase(), WatchState::Phase::watch);
    std::string watch = state.next_query();
    EXPECT_TRUE(contains(watch, "watch=true&allowWatchBookmarks=true&resourceVersion=17"));
    EXPECT_TRUE(contains(watch, "labelSelector=app%3Dw"));
}

TEST(KubeWatchState, TimeoutSecondsIsRandomisedWithinMinAndTwiceMin) {
    auto state = make_state();
    list_last_page(state, "5");
    for (int i = 0; i < 50; ++i) {
        std::string query = state.next_query();
        auto at = query.find("timeoutSeconds=");
        ASSERT_NE(at, std::string::npos);
        int seconds = std::stoi(query.substr(at + 15));
        EXPECT_GE(seconds, 10);
        EXPECT_LT(seconds, 20);
    }
}

TEST(KubeWatchState, EventsAndBookmarksMoveTheVersion) {
    auto state = make_state();
    list_last_page(state, "5");
    auto added = state.on_watch_line(
        R"({"type":"ADDED","object":{"metadata":{"name":"x","resourceVersion":"6"}}})");
    ASSERT_TRUE(added.event);
    EXPECT_EQ(added.event->kind, Kind::added);
    EXPECT_EQ(added.event->object["metadata"]["name"], "x");
    EXPECT_EQ(state.resource_version(), "6");
    auto bookmark = state.on_watch_line(
        R"({"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"9"}}})");
    EXPECT_FALSE(bookmark.event);
    EXPECT_FALSE(bookmark.restart);
    EXPECT_EQ(state.resource_version(), "9");
    EXPECT_EQ(
        state.on_watch_line(R"({"type":"MODIFIED","object":{"metadata":{"resourceVersion":"10"}}})")
            .event->kind,
        Kind::modified);
    EXPECT_EQ(
        state.on_watch_line(R"({"type":"DELETED","object":{"metadata":{"resourceVersion":"11"}}})")
            .event->kind,
        Kind::deleted);
}

TEST(KubeWatchState, RotationWatchesAgainWithoutListing) {
    auto state = make_state();
    list_last_page(state, "5");
    state.next_query();
    state.on_watch_line(R"({"type":"ADDED","object":{"metadata":{"resourceVersion":"8"}}})");
    state.on_stream_end(10s, true);
    EXPECT_EQ(state.phase(), WatchState::Phase::watch);
    EXPECT_EQ(state.delay(), 0ms);
    EXPECT_TRUE(contains(state.next_query(), "resourceVersion=8"));
    EXPECT_EQ(state.lists_started(), 1u);
    EXPECT_EQ(state.watches_started(), 2u);
}

TEST(KubeWatchState, AnEmptyStreamEndedAtOnceBacksOff) {
    auto state = make_state();
    list_last_page(state, "5");
    state.on_stream_end(50ms, false);
    EXPECT_GT(state.delay(), 0ms);
    EXPECT_EQ(state.phase(), WatchState::Phase::watch);
}

TEST(KubeWatchState, GoneAsAnErrorEventRelistsAtOnce) {
    auto state = make_state();
    list_last_page(state, "5");
    auto outcome = state.on_watch_line(
        R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old"}})");
    EXPECT_TRUE(outcome.restart);
    EXPECT_FALSE(outcome.event);
    EXPECT_EQ(state.phase(), WatchState::Phase::list);
    EXPECT_EQ(state.delay(), 0ms);
    EXPECT_EQ(state.next_query(), "?labelSelector=app%3Dw&limit=2");
    EXPECT_EQ(state.lists_started(), 2u);
    EXPECT_TRUE(contains(state.last_problem(), "410"));
}

TEST(KubeWatchState, GoneAsHttpStatusRelists) {
    auto state = make_state();
    list_last_page(state, "5");
    state.on_http_error(ApiStatus{410, "Expired", "too old"});
    EXPECT_EQ(state.phase(), WatchState::Phase::list);
    EXPECT_EQ(state.resource_version(), "");
}

TEST(KubeWatchState, ExpiredContinueTokenStartsTheListOver) {
    auto state = make_state();
    state.next_query();
    state.on_list_page(R"({"metadata":{"continue":"c1"},"items":[{"metadata":{"name":"a"}}]})");
    state.next_query();
    state.on_http_error(ApiStatus{410, "Expired", "continue token expired"});
    EXPECT_EQ(state.next_query(), "?labelSelector=app%3Dw&limit=2");
    auto synced = state.on_list_page(R"({"metadata":{"resourceVersion":"3"},"items":[]})");
    ASSERT_TRUE(synced);
    EXPECT_TRUE(synced->items.empty()); // nothing left over from the abandoned pages
}

TEST(KubeWatchState, ResumeStartsWithAWatch) {
    WatchSettings settings;
    settings.resume_from = "123";
    WatchState state(settings, 1);
    EXPECT_EQ(state.phase(), WatchState::Phase::watch);
    EXPECT_TRUE(contains(state.next_query(), "resourceVersion=123"));
    EXPECT_EQ(state.lists_started(), 0u);
}

TEST(KubeWatchState, FailuresBackOffAndSuccessResets) {
    auto state = make_state();
    list_last_page(state, "5");
    state.on_transport_error("connection refused");
    auto first = state.delay();
    EXPECT_GE(first, 400ms);
    EXPECT_LE(first, 800ms);
    state.on_http_error(ApiStatus{500, "", "boom"});
    state.on_http_error(ApiStatus{503, "", "busy"});
    EXPECT_EQ(state.failures(), 3u);
    EXPECT_GE(state.delay(), 1600ms);
    EXPECT_EQ(state.phase(), WatchState::Phase::watch); // a failure is not a reason to re-list
    state.on_watch_line(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"7"}}})");
    EXPECT_EQ(state.failures(), 0u);
    EXPECT_EQ(state.delay(), 0ms);
}

TEST(KubeWatchState, ARefusalIsToldApartUntilSomethingElseHappens) {
    auto state = make_state();
    state.next_query();
    state.on_http_error(ApiStatus{403, "Forbidden", "leases is forbidden"});
    EXPECT_TRUE(state.refused());
    EXPECT_TRUE(contains(state.last_problem(), "HTTP 403: leases is forbidden"));
    state.on_http_error(ApiStatus{401, "Unauthorized", "Unauthorized"});
    EXPECT_TRUE(state.refused());
    state.on_transport_error("connection refused");
    EXPECT_FALSE(state.refused()) << "the last failure was no refusal";
    state.on_http_error(ApiStatus{403, "Forbidden", "leases is forbidden"});
    state.on_http_error(ApiStatus{500, "", "boom"});
    EXPECT_FALSE(state.refused());
    state.on_http_error(ApiStatus{403, "Forbidden", "leases is forbidden"});
    list_last_page(state, "5");
    EXPECT_FALSE(state.refused()) << "a list that succeeded";
}

TEST(KubeWatchState, GarbageLineRestartsWithBackoff) {
    auto state = make_state();
    list_last_page(state, "5");
    auto outcome = state.on_watch_line("not json");
    EXPECT_TRUE(outcome.restart);
    EXPECT_GT(state.delay(), 0ms);
}

WatchState make_streaming_state() {
    WatchSettings settings;
    settings.stream_initial = true;
    return make_state(settings);
}

constexpr std::string_view k_initial_end =
    R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"30",)"
    R"("annotations":{"k8s.io/initial-events-end":"true"}}}})";

TEST(KubeWatchState, AWatchListStreamsTheCollectionThenWatchesOnOneRequest) {
    auto state = make_streaming_state();
    EXPECT_EQ(state.phase(), WatchState::Phase::initial);
    EXPECT_TRUE(state.streams()) << "the first request is already the stream";
    const std::string query = state.next_query();
    EXPECT_TRUE(contains(query, "watch=true")) << query;
    EXPECT_TRUE(contains(query, "sendInitialEvents=true")) << query;
    EXPECT_TRUE(contains(query, "resourceVersionMatch=NotOlderThan")) << query;
    EXPECT_FALSE(contains(query, "resourceVersion=")) << "a consistent read: no version";
    EXPECT_FALSE(contains(query, "limit=")) << query;

    auto a = state.on_watch_line(
        R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"21"}}})");
    auto b = state.on_watch_line(
        R"({"type":"ADDED","object":{"metadata":{"name":"b","resourceVersion":"25"}}})");
    EXPECT_FALSE(a.event) << "the collection is told whole, not object by object";
    EXPECT_FALSE(b.event);
    auto end = state.on_watch_line(k_initial_end);
    ASSERT_TRUE(end.event);
    EXPECT_FALSE(end.restart) << "the same stream goes on as the watch";
    EXPECT_EQ(end.event->kind, Kind::synced);
    ASSERT_EQ(end.event->items.size(), 2u);
    EXPECT_EQ(end.event->items[1]["metadata"]["name"], "b");
    EXPECT_EQ(state.phase(), WatchState::Phase::watch);
    EXPECT_EQ(state.resource_version(), "30");
    EXPECT_EQ(state.lists_started(), 0u);

    auto later = state.on_watch_line(
        R"({"type":"ADDED","object":{"metadata":{"name":"c","resourceVersion":"31"}}})");
    ASSERT_TRUE(later.event) << "after the bookmark, events are events";
    EXPECT_EQ(later.event->kind, Kind::added);

    state.on_stream_end(5s, true); // rotation: watch on from 31, nothing streamed again
    EXPECT_TRUE(contains(state.next_query(), "resourceVersion=31"));
}

TEST(KubeWatchState, AServerWithoutWatchListsGetsListAndWatch) {
    auto state = make_streaming_state();
    state.next_query();
    state.on_http_error(ApiStatus{422, "Invalid",
                                  "sendInitialEvents is forbidden for watch "
                                  "unless the WatchList feature gate is enabled"});
    EXPECT_EQ(state.phase(), WatchState::Phase::list);
    EXPECT_EQ(state.delay(), 0ms) << "listed at once: the refusal is an answer, not a failure";
    EXPECT_EQ(state.next_query(), "?labelSelector=app%3Dw&limit=2");
    ASSERT_TRUE(list_last_page(state, "40"));
    state.on_http_error(ApiStatus{410, "Expired", "too old"});
    EXPECT_EQ(state.phase(), WatchState::Phase::list) << "once refused, lists from then on";
}

TEST(KubeWatchState, AWatchListCutShortIsStreamedAgainWholeAfterAPause) {
    auto state = make_streaming_state();
    state.next_query();
    state.on_watch_line(
        R"({"type":"ADDED","object":{"metadata":{"name":"a","resourceVersion":"21"}}})");
    state.on_stream_end(2s, true);
    EXPECT_EQ(state.phase(), WatchState::Phase::initial);
    EXPECT_GT(state.delay(), 0ms);
    state.next_query();
    state.on_watch_line(
        R"({"type":"ADDED","object":{"metadata":{"name":"b","resourceVersion":"22"}}})");
    auto end = state.on_watch_line(k_initial_end);
    ASSERT_TRUE(end.event);
    ASSERT_EQ(end.event->items.size(), 1u) << "only what the second stream sent";
    EXPECT_EQ(end.event->items[0]["metadata"]["name"], "b");
}

TEST(KubeWatchState, GoneDuringAWatchStreamsTheCollectionAgain) {
    auto state = make_streaming_state();
    state.next_query();
    ASSERT_TRUE(state.on_watch_line(k_initial_end).event);
    state.on_http_error(ApiStatus{410, "Expired", "too old"});
    EXPECT_EQ(state.phase(), WatchState::Phase::initial);
    EXPECT_TRUE(contains(state.next_query(), "sendInitialEvents=true"));
}

TEST(KubeRetryBackoff, GrowsCapsAndJitters) {
    EXPECT_EQ(retry_backoff(0, 1s, 30s, 0.5), 0ms);
    EXPECT_EQ(retry_backoff(1, 1s, 30s, 1.0), 1000ms);
    EXPECT_EQ(retry_backoff(1, 1s, 30s, 0.0), 500ms);
    EXPECT_EQ(retry_backoff(3, 1s, 30s, 1.0), 4000ms);
    EXPECT_EQ(retry_backoff(20, 1s, 30s, 1.0), 30000ms);
    EXPECT_EQ(retry_backoff(20, 1s, 30s, 0.0), 15000ms);
    EXPECT_EQ(retry_backoff(1000, 1s, 30s, 2.0), 30000ms); // random clamped to [0, 1]
}

TEST(KubeThrottleWait, HonoursRetryAfterAndSpreadsUpToAsMuchAgain) {
    EXPECT_EQ(throttle_wait(1, 0.0), 1000ms); // never sooner than the server asked
    EXPECT_EQ(throttle_wait(1, 1.0), 2000ms);
    EXPECT_EQ(throttle_wait(1, 0.25), 1250ms);
    EXPECT_EQ(throttle_wait(0, 0.5), 1500ms);  // none given: a second
    EXPECT_EQ(throttle_wait(-1, 0.0), 1000ms); // nonsense: a second
    EXPECT_EQ(throttle_wait(60, 0.0), 2000ms); // capped at two
    EXPECT_EQ(throttle_wait(60, 7.0), 4000ms); // random clamped to [0, 1]
}

} // namespace kubeapi_watch_state
} // namespace
