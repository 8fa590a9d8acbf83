// How long a transaction may take past its point of no return: the time a rollout keeps its slot
// after the node marked it committing.
#include "shimkeeper/reconcile/commit_bound.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::reconcile {
namespace {
namespace reconcile_commit_bound {

using std::chrono::seconds;

TEST(CommitBound, WithoutARestartOnlyTheFileChangesCount) {
    spec::AgentSettings settings;
    settings.health.timeout = std::chrono::minutes(10);
    EXPECT_EQ(longest_commit(settings, Restart::no), k_commit_margin);
}

// The change and its rollback each restart containerd (up to two attempts, each after the spacing
// or the start limit, then the job) and wait for its health.
TEST(CommitBound, ARestartingTransactionCoversTheChangeAndItsRollbackAtTheirWorst) {
    spec::AgentSettings settings;
    settings.systemd.restart_spacing = seconds(2);
    settings.health.timeout = seconds(30);
    const seconds attempt = seconds(2) + k_start_limit_allowance + seconds(90);
    EXPECT_EQ(longest_commit(settings, Restart::yes),
              k_commit_margin + 2 * (2 * attempt + seconds(30)));
    // A minute more of health check is two more minutes (the change's and the rollback's); a
    // spacing of a minute more, four (two attempts each).
    const seconds before = longest_commit(settings, Restart::yes);
    settings.health.timeout += seconds(60);
    EXPECT_EQ(longest_commit(settings, Restart::yes), before + seconds(120));
    settings.systemd.restart_spacing += seconds(60);
    EXPECT_EQ(longest_commit(settings, Restart::yes), before + seconds(120) + seconds(240));
    // Parts of a second count as a whole one.
    settings.health.timeout += std::chrono::milliseconds(1);
    EXPECT_EQ(longest_commit(settings, Restart::yes), before + seconds(362));
}

} // namespace reconcile_commit_bound
} // namespace
} // namespace shimkeeper::reconcile
