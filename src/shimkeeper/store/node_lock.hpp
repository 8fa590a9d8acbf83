// One exclusive lock per node (per store), taken by every run that can change the node or the
// store: apply, rollback, fetch, and each reconcile (recovery included) of the daemon. Without
// it two runs interleave their transactions: one rolls back to its before-state and so removes
// what the other just committed.
//
// flock(2) on <state>/lock: the kernel releases it when the holder dies, so a SIGKILLed run never
// leaves it taken. The holder writes its pid, command and start time into that same file (no
// fsync: like the lock, the record means nothing after a reboot), so a waiting run can say what
// it waits for. Read-only commands (plan, status, version) never take
// it and never wait.
#pragma once

#include "shimkeeper/store/store.hpp"
#include "shimkeeper/util/error.hpp"
#include "shimkeeper/util/fd.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <string>

namespace shimkeeper::store {

struct LockHolder {
    long pid = 0;
    std::string command; // "shimkeeper apply"
    std::string since;   // RFC 3339 UTC

    std::string describe() const; // "pid 1234 (shimkeeper apply, since 2026-...)"
};

struct LockWait {
    std::chrono::milliseconds timeout{600'000}; // zero: do not wait (--no-wait)
    // Called once when the lock is taken by someone else, before waiting: says who.
    std::function<void(const std::optional<LockHolder>&)> on_wait;
    std::function<void()> heartbeat; // called while waiting (the daemon's watchdog)
};

class NodeLock {
public:
    // Takes the lock for `command`, waiting as `wait` says. A timeout (or --no-wait) is an
    // error (exit 1) naming the holder.
    static util::Expected<NodeLock> acquire(const Store& store, const std::string& command,
                                            const LockWait& wait);

    NodeLock(NodeLock&&) noexcept = default;
    NodeLock& operator=(NodeLock&&) noexcept = default;
    ~NodeLock(); // releases: the holder record is cleared while still held, then the fd closed

    // Who holds it now, as recorded (nullopt: nobody recorded, or unreadable).
    static std::optional<LockHolder> holder(const Store& store);

private:
    explicit NodeLock(util::Fd fd) : m_fd(std::move(fd)) {}

    util::Fd m_fd;
};

} // namespace shimkeeper::store
