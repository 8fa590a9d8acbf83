// No API request may hold the daemon's loop for long. Each is bounded by a quarter of
// the watchdog interval (1 s to 15 s), and a pass stops asking after the first request that got
// no answer, pinging the watchdog before every request it makes.
#include "shimkeeper/kubeapi/leader_renewal.hpp"
#include "shimkeeper/kubeapi/request_bound.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::kubeapi {
namespace {
namespace kubeapi_request_bound {

using namespace std::chrono_literals;

TEST(KubeRequestBound, AQuarterOfTheWatchdogWithinOneToFifteenSeconds) {
    EXPECT_EQ(request_time_bound(std::chrono::microseconds(20s)), 5s);
    EXPECT_EQ(request_time_bound(std::chrono::microseconds(1min)), 15s);
    EXPECT_EQ(request_time_bound(std::chrono::microseconds(3min)), 15s); // the shipped unit
    EXPECT_EQ(request_time_bound(std::chrono::microseconds(2s)), 1s);
    EXPECT_EQ(request_time_bound(std::nullopt), 15s);
    EXPECT_EQ(request_time_bound(std::chrono::microseconds(0)), 15s);
}

// A leader's renewal gives up on a request within half the renew deadline, so that one more round
// fits before the term ends (the general bound of 15 s outlasted the 10-s deadline).
TEST(KubeRequestBound, ARenewalRequestGetsHalfTheRenewDeadline) {
    LeaseSettings settings;
    EXPECT_EQ(renewal_request_bound(settings), 5s);
    EXPECT_LE(2 * renewal_request_bound(settings), settings.renew_deadline);
    settings.renew_deadline = 2s;
    EXPECT_EQ(renewal_request_bound(settings), 1s) << "never below the general minimum";
    settings.renew_deadline = 60s;
    EXPECT_EQ(renewal_request_bound(settings), 15s) << "nor above the general maximum";
}

TEST(KubeRequestBound, TheProcessBoundFollowsWatchdogUsec) {
    ::setenv("WATCHDOG_USEC", "8000000", 1);
    ::unsetenv("WATCHDOG_PID"); // no pid: meant for whoever reads it
    EXPECT_EQ(request_time_bound(), 2s);
    ::unsetenv("WATCHDOG_USEC");
    EXPECT_EQ(request_time_bound(), 15s);
}

TEST(KubeApiPass, AfterTheFirstRequestWithoutAnAnswerTheRestFailAtOnce) {
    int pings = 0;
    ApiPass pass([&pings] { ++pings; });
    ASSERT_TRUE(pass.before_request());
    ASSERT_TRUE(pass.before_request());
    EXPECT_TRUE(pass.answered_so_far());
    pass.note_no_answer(
        util::Error(util::ErrorCode::network, "GET /api/v1/nodes/a: Timeout was reached"));
    pass.note_no_answer(util::Error(util::ErrorCode::network, "a later one"));
    EXPECT_FALSE(pass.answered_so_far());
    auto next = pass.before_request();
    ASSERT_FALSE(next);
    EXPECT_EQ(next.error().code(), util::ErrorCode::network); // rides out like unreachable
    EXPECT_EQ(next.error().message(), "not asked: the API server did not answer an earlier "
                                      "request (GET /api/v1/nodes/a: Timeout was reached)");
    EXPECT_EQ(pings, 3); // the watchdog is pinged before every request, asked or not
}

TEST(KubeApiPass, AStoppedPassAsksNothingMore) {
    bool stopping = false;
    ApiPass pass({}, [&stopping] { return !stopping; });
    ASSERT_TRUE(pass.before_request());
    stopping = true; // the slot renewal's, when the transaction ends
    auto next = pass.before_request();
    ASSERT_FALSE(next);
    EXPECT_EQ(next.error().message(), "not asked: the pass was stopped");
}

TEST(KubeApiPass, ASiblingPingsTheSameWatchdogAndAsksAfresh) {
    int pings = 0;
    ApiPass pass([&pings] { ++pings; });
    pass.note_no_answer(util::Error(util::ErrorCode::network, "Timeout was reached"));
    ASSERT_FALSE(pass.before_request());
    // Marking a rollout failed is still asked, once, in a pass of its own.
    const std::shared_ptr<ApiPass> marking = pass.sibling();
    EXPECT_TRUE(marking->before_request());
    EXPECT_EQ(pings, 2);
}

TEST(KubeApiPass, KeepsTheFirstRefusal) {
    ApiPass pass;
    EXPECT_FALSE(pass.refused());
    pass.note_refused(util::Error(util::ErrorCode::refused, "tokenFile /t cannot be read"));
    pass.note_refused(util::Error(util::ErrorCode::refused, "a later one"));
    ASSERT_TRUE(pass.refused());
    EXPECT_EQ(pass.refused()->message(), "tokenFile /t cannot be read");
    EXPECT_TRUE(pass.answered_so_far()); // refused is an answer, not a hang
}

} // namespace kubeapi_request_bound
} // namespace
} // namespace shimkeeper::kubeapi
