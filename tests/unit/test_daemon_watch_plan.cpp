#include "shimkeeper/daemon/watch_plan.hpp"

#include <gtest/gtest.h>
#include <sys/inotify.h>

namespace {
namespace daemon_watch_plan {

using namespace shimkeeper::daemon;

auto dirs_named(std::vector<std::string> dirs) {
    return [dirs = std::move(dirs)](const std::filesystem::path& path) {
        return std::find(dirs.begin(), dirs.end(), path.string()) != dirs.end();
    };
}

TEST(DaemonWatchPlan, WatchesTheParentOnceAndAnExistingDropInDirectory) {
    auto plan = plan_watches({"/etc/shimkeeper/shimkeeper.toml", "/etc/shimkeeper/shims.d/"},
                             dirs_named({"/etc/shimkeeper/shims.d"}));
    std::vector<DirWatch> expected{
        {"/etc/shimkeeper", WatchKind::named_entries, {"shimkeeper.toml", "shims.d"}},
        {"/etc/shimkeeper/shims.d", WatchKind::toml_entries, {}},
    };
    EXPECT_EQ(plan, expected);
}

TEST(DaemonWatchPlan, AMissingDropInDirectoryIsOnlyLookedForByName) {
    auto plan = plan_watches({"/etc/shimkeeper/shimkeeper.toml", "/etc/shimkeeper/shims.d"},
                             dirs_named({}));
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0].names, (std::vector<std::string>{"shimkeeper.toml", "shims.d"}));
}

TEST(DaemonWatchPlan, PathsInDifferentDirectoriesGetTheirOwnParents) {
    auto plan = plan_watches({"/etc/sk/agent.toml", "/srv/drop/shims.d", "/srv/drop/shims.d"},
                             dirs_named({"/srv/drop/shims.d"}));
    ASSERT_EQ(plan.size(), 3u);
    EXPECT_EQ(plan[0].dir, "/etc/sk");
    EXPECT_EQ(plan[1].dir, "/srv/drop");
    EXPECT_EQ(plan[1].names, (std::vector<std::string>{"shims.d"})); // duplicates merged
    EXPECT_EQ(plan[2].dir, "/srv/drop/shims.d");
}

TEST(DaemonWatchPlan, RelativePathsWatchTheCurrentDirectory) {
    auto plan = plan_watches({"agent.toml"}, dirs_named({}));
    ASSERT_EQ(plan.size(), 1u);
    EXPECT_EQ(plan[0].dir, ".");
}

TEST(DaemonWatchPlan, TheParentReactsOnlyToTheWatchedNames) {
    DirWatch parent{"/etc/shimkeeper", WatchKind::named_entries, {"shimkeeper.toml", "shims.d"}};
    EXPECT_TRUE(is_relevant(parent, "shimkeeper.toml", IN_MOVED_TO));
    EXPECT_TRUE(is_relevant(parent, "shimkeeper.toml", IN_CLOSE_WRITE));
    EXPECT_TRUE(is_relevant(parent, "shims.d", IN_CREATE | IN_ISDIR));
    EXPECT_TRUE(is_relevant(parent, "shims.d", IN_DELETE | IN_ISDIR));
    EXPECT_FALSE(is_relevant(parent, ".shimkeeper.toml.swp", IN_CLOSE_WRITE));
    EXPECT_FALSE(is_relevant(parent, "other.conf", IN_MOVED_TO));
}

TEST(DaemonWatchPlan, TheDropInDirectoryReactsToWhatTheLoaderReads) {
    DirWatch drop_ins{"/etc/shimkeeper/shims.d", WatchKind::toml_entries, {}};
    EXPECT_TRUE(is_relevant(drop_ins, "spin.toml", IN_CREATE));
    EXPECT_TRUE(is_relevant(drop_ins, "spin.toml", IN_MOVED_TO));
    EXPECT_TRUE(is_relevant(drop_ins, "spin.toml", IN_MOVED_FROM));
    EXPECT_TRUE(is_relevant(drop_ins, "spin.toml", IN_DELETE));
    EXPECT_TRUE(is_relevant(drop_ins, "..data", IN_MOVED_TO)); // ConfigMap volume swap
    EXPECT_FALSE(is_relevant(drop_ins, ".spin.toml.swp", IN_CLOSE_WRITE));
    EXPECT_FALSE(is_relevant(drop_ins, ".spin.toml", IN_MOVED_TO));
    EXPECT_FALSE(is_relevant(drop_ins, "spin.toml~", IN_MOVED_TO));
    EXPECT_FALSE(is_relevant(drop_ins, "README", IN_CLOSE_WRITE));
}

TEST(DaemonWatchPlan, LosingTheWatchOrEventsAlwaysCallsForAReconcile) {
    DirWatch drop_ins{"/etc/shimkeeper/shims.d", WatchKind::toml_entries, {}};
    EXPECT_TRUE(is_relevant(drop_ins, "", IN_DELETE_SELF));
    EXPECT_TRUE(is_relevant(drop_ins, "", IN_MOVE_SELF));
    EXPECT_TRUE(is_relevant(drop_ins, "", IN_IGNORED));
    EXPECT_TRUE(is_relevant(drop_ins, "", IN_Q_OVERFLOW));
}

TEST(DaemonWatchPlan, MasksAskForDirectoriesOnlyAndRenames) {
    for (WatchKind kind : {WatchKind::named_entries, WatchKind::toml_entries}) {
        std::uint32_t mask = inotify_mask(kind);
        EXPECT_NE(mask & IN_ONLYDIR, 0u);
        EXPECT_NE(mask & IN_MOVED_TO, 0u);
        EXPECT_NE(mask & IN_CLOSE_WRITE, 0u);
        EXPECT_EQ(mask & IN_MODIFY, 0u); // one event per write would only add wakeups
    }
    EXPECT_NE(inotify_mask(WatchKind::toml_entries) & IN_DELETE_SELF, 0u);
}

} // namespace daemon_watch_plan
} // namespace
