#include "shimkeeper/store/node_lock.hpp"

#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/utc_time.hpp"

#include <cerrno>
#include <ctime>
#include <fcntl.h>
#include <sstream>
#include <sys/file.h>
#include <thread>
#include <unistd.h>

namespace shimkeeper::store {

namespace {

using Clock = std::chrono::steady_clock;

// How often a waiting run tries again: a lock is held for a transaction (seconds), so a tenth of
// a second costs nothing and is far below any timeout a user sets.
constexpr std::chrono::milliseconds k_poll{100};

std::string seconds_text(std::chrono::milliseconds value) {
    std::ostringstream out;
    out << static_cast<double>(value.count()) / 1000 << " s";
    return out.str();
}

} // namespace

std::string LockHolder::describe() const {
    return "pid " + std::to_string(pid) + " (" + command + ", since " + since + ")";
}

std::optional<LockHolder> NodeLock::holder(const Store& store) {
    auto text = util::read_file(store.state_dir() / "lock");
    if (!text || text->empty()) {
        return std::nullopt;
    }
    // "<pid>\n<since>\n<command>\n"
    std::istringstream in(*text);
    LockHolder holder;
    std::string pid;
    if (!std::getline(in, pid) || !std::getline(in, holder.since) ||
        !std::getline(in, holder.command)) {
        return std::nullopt;
    }
    try {
        holder.pid = std::stol(pid);
    } catch (const std::exception&) {
        return std::nullopt;
    }
    return holder;
}

util::Expected<NodeLock> NodeLock::acquire(const Store& store, const std::string& command,
                                           const LockWait& wait) {
    TRY(util::create_directories(store.state_dir()));
    const std::filesystem::path lock_file = store.state_dir() / "lock";
    util::Fd fd(::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
    if (!fd) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io, "cannot open the node lock " + lock_file.string(), errno));
    }
    const auto deadline = Clock::now() + wait.timeout;
    bool told = false;
    while (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
        if (errno == EINTR) {
            continue;
        }
        if (errno != EWOULDBLOCK) {
            return std::unexpected(util::Error::from_errno(
                util::ErrorCode::io, "cannot take the node lock " + lock_file.string(), errno));
        }
        const auto held_by = holder(store);
        const std::string who = held_by ? held_by->describe() : "another shimkeeper run";
        if (Clock::now() >= deadline) {
            return util::fail(
                util::ErrorCode::external,
                "the node is locked by " + who + " (" + lock_file.string() + "); " +
                    (wait.timeout.count() == 0
                         ? std::string("not waiting (--no-wait)")
                         : "gave up after " + seconds_text(wait.timeout) + " (--lock-timeout)"));
        }
        if (!told && wait.on_wait) {
            wait.on_wait(held_by);
            told = true;
        }
        if (wait.heartbeat) {
            wait.heartbeat();
        }
        std::this_thread::sleep_for(std::min<Clock::duration>(
            k_poll, std::max<Clock::duration>(deadline - Clock::now(), Clock::duration(0))));
    }
    const std::string record =
        std::to_string(::getpid()) + "\n" + util::now_rfc3339() + "\n" + command + "\n";
    if (::ftruncate(fd.get(), 0) != 0 || ::pwrite(fd.get(), record.data(), record.size(), 0) !=
                                             static_cast<ssize_t>(record.size())) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io, "cannot record the lock holder in " + lock_file.string(), errno));
    }
    return NodeLock(std::move(fd));
}

NodeLock::~NodeLock() {
    if (m_fd) {
        // Cleared while still holding the lock, so a new holder's record is never erased. A
        // failure leaves a stale record that the next holder overwrites: nothing to do here
        // (and glibc's _FORTIFY_SOURCE refuses a mere (void) cast of the result).
        if (::ftruncate(m_fd.get(), 0) != 0) {
            return;
        }
    }
}

} // namespace shimkeeper::store
