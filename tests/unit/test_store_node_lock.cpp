// The node lock between real processes: a second run is refused at once with --no-wait and told
// who holds it, waits while it is held, and takes it at once when the holder is SIGKILLed.
#include "shimkeeper/store/node_lock.hpp"
#include "shimkeeper/util/fs.hpp"

#include <csignal>
#include <filesystem>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

namespace shimkeeper::store {
namespace {
namespace store_node_lock {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class NodeLockTest : public ::testing::Test {
protected:
    void TearDown() override {
        if (m_child > 0) {
            ::kill(m_child, SIGKILL);
            ::waitpid(m_child, nullptr, 0);
        }
        if (!HasFailure()) {
            fs::remove_all(m_dir);
        }
    }

    // A child process that takes the lock as "test holder" and keeps it until killed; returns
    // once the child holds it (it closes the pipe when it does).
    void hold_in_child() {
        int ready[2];
        ASSERT_EQ(::pipe(ready), 0);
        m_child = ::fork();
        ASSERT_GE(m_child, 0);
        if (m_child == 0) {
            ::close(ready[0]);
            auto lock = NodeLock::acquire(m_store, "test holder", {});
            ::close(ready[1]);
            if (!lock) {
                ::_exit(1);
            }
            ::pause();
            ::_exit(0);
        }
        ::close(ready[1]);
        char byte = 0;
        ASSERT_EQ(::read(ready[0], &byte, 1), 0); // EOF: the child holds the lock
        ::close(ready[0]);
    }

    fs::path m_dir = util::make_temp_dir(fs::temp_directory_path(), "sk-lock-").value();
    Store m_store{util::HostRoot{m_dir}, "/store"};
    pid_t m_child = -1;
};

TEST_F(NodeLockTest, NoWaitIsRefusedAtOnceNamingTheHolder) {
    hold_in_child();
    LockWait no_wait;
    no_wait.timeout = 0ms;
    auto lock = NodeLock::acquire(m_store, "shimkeeper apply", no_wait);
    ASSERT_FALSE(lock);
    const std::string message = lock.error().message();
    EXPECT_EQ(lock.error().exit_code(), 1);
    EXPECT_NE(message.find("pid " + std::to_string(m_child) + " (test holder"), std::string::npos)
        << message;
    EXPECT_NE(message.find("--no-wait"), std::string::npos) << message;
}

TEST_F(NodeLockTest, AWaitingRunSaysWhoItWaitsForAndGivesUpAtItsTimeout) {
    hold_in_child();
    LockWait wait;
    wait.timeout = 300ms;
    std::optional<LockHolder> seen;
    int calls = 0;
    wait.on_wait = [&](const std::optional<LockHolder>& holder) {
        seen = holder;
        ++calls;
    };
    auto lock = NodeLock::acquire(m_store, "shimkeeper apply", wait);
    ASSERT_FALSE(lock);
    EXPECT_EQ(calls, 1);
    ASSERT_TRUE(seen);
    EXPECT_EQ(seen->pid, m_child);
    EXPECT_NE(lock.error().message().find("--lock-timeout"), std::string::npos);
}

TEST_F(NodeLockTest, AKilledHolderLeavesTheLockFreeAtOnce) {
    hold_in_child();
    ::kill(m_child, SIGKILL);
    ::waitpid(m_child, nullptr, 0);
    m_child = -1;
    LockWait no_wait;
    no_wait.timeout = 0ms;
    auto lock = NodeLock::acquire(m_store, "shimkeeper apply", no_wait);
    ASSERT_TRUE(lock) << lock.error().message();
    auto holder = NodeLock::holder(m_store);
    ASSERT_TRUE(holder);
    EXPECT_EQ(holder->pid, ::getpid());
    EXPECT_EQ(holder->command, "shimkeeper apply");
}

TEST_F(NodeLockTest, ReleasingClearsTheHolderRecord) {
    {
        auto lock = NodeLock::acquire(m_store, "shimkeeper fetch", {});
        ASSERT_TRUE(lock);
        EXPECT_TRUE(NodeLock::holder(m_store));
    }
    EXPECT_FALSE(NodeLock::holder(m_store));
}

} // namespace store_node_lock
} // namespace
} // namespace shimkeeper::store
