#include "shimkeeper/reconcile/background_staging.hpp"

#include "shimkeeper/reconcile/stage.hpp"
#include "shimkeeper/reconcile/stage_ahead.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <exception>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <system_error>
#include <unistd.h>

namespace shimkeeper::reconcile {

namespace {

// A Shim at one version of its content: a new sha256 or reference is staged anew, the same one
// never twice.
std::string version_key(const spec::ShimSpec& shim) {
    return shim.name + '\n' + shim.fetch.display() + '\n' + shim.fetch.path + '\n' +
           shim.fetch.sha256.value_or("");
}

util::Fd make_eventfd() {
    util::Fd fd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    if (!fd) {
        throw std::system_error(errno, std::generic_category(), "eventfd for staging ahead");
    }
    return fd;
}

// A staging runs 10 nice levels below the daemon, at most 19: nice 10 for a daemon at the
// default 0. A thread of its own is a task of its own to Linux's scheduler. Why: staging ahead is
// background work, and a transaction holds a rollout slot that other nodes wait for; on a busy
// node the download and its inflating must not slow the node's workloads or a slot's holder
// (bench/rollout, 200 nodes on two cores: a slot holder's transaction waited seconds behind other
// nodes' staging). Relative, not fixed: a daemon run at another nice keeps its staging that far
// below it. Ten levels, about a tenth of a busy core's share against a workload at 0, not idle
// priority nor 19: a node whose cores are always busy must still finish staging, or it never
// asks for its slot. Raising a nice value needs no privilege; the thread never lowers it again.
void lower_this_threads_cpu_priority(const util::Log& log, const std::string& shim) {
    errno = 0;
    const int nice = ::getpriority(PRIO_PROCESS, 0); // the calling thread's
    if (nice == -1 && errno != 0) {
        return;
    }
    if (::setpriority(PRIO_PROCESS, 0, std::min(nice + 10, 19)) != 0) {
        log.debug(shim + ": staging keeps the daemon's CPU priority: setpriority: " +
                      std::strerror(errno),
                  {.shim = shim});
    }
}

} // namespace

BackgroundStaging::BackgroundStaging(util::Log log, MakeDownloader make_downloader)
    : m_log(std::move(log)), m_make_downloader(std::move(make_downloader)),
      m_ended_signal(make_eventfd()) {}

BackgroundStaging::~BackgroundStaging() {
    for (auto& [key, running] : m_running) {
        running->stop = true;
    }
    for (auto& [key, running] : m_running) {
        running->thread.join();
    }
}

bool BackgroundStaging::take_ended() {
    std::uint64_t count = 0;
    return ::read(m_ended_signal.get(), &count, sizeof count) == sizeof count;
}

void BackgroundStaging::collect_ended() {
    std::erase_if(m_running, [this](auto& entry) {
        Running& running = *entry.second;
        if (!running.ended) {
            return false;
        }
        running.thread.join();
        if (!running.stop) {
            m_ended.insert(entry.first);
        }
        return true;
    });
}

std::set<std::string> BackgroundStaging::stage(const Node& node,
                                               const std::vector<spec::ShimSpec>& shims) {
    collect_ended();
    auto state = node.store.load_state(); // unreadable: the staging's stage_ahead says why
    const store::Generation* current = state ? state->current_generation() : nullptr;
    std::set<std::string> wanted;
    std::set<std::string> pending;
    for (const spec::ShimSpec& shim : shims) {
        if (!content_is_pinned(shim)) {
            continue; // its transaction fetches it (stage_ahead.hpp says why)
        }
        const std::string key = version_key(shim);
        wanted.insert(key);
        if (m_ended.contains(key)) {
            continue;
        }
        if (m_running.contains(key)) {
            pending.insert(shim.name);
            continue;
        }
        if (state) {
            const auto digest = known_digest(shim, current, node.store);
            if (digest && node.store.has_artifact(*digest)) {
                continue; // staged before this daemon started; its transaction checks it
            }
        }
        auto running = std::make_unique<Running>();
        running->name = shim.name;
        running->thread = std::thread(
            [this, job = Job{shim, node.root, node.settings, node.detection, node.store},
             &run = *running] { stage_one(job, run); });
        m_running.emplace(key, std::move(running));
        pending.insert(shim.name);
    }
    std::erase_if(m_ended, [&](const std::string& key) { return !wanted.contains(key); });
    for (auto& [key, running] : m_running) {
        if (!wanted.contains(key) && !running->stop.exchange(true)) {
            m_log.info(running->name + ": staging ahead of its rollout slot stops: that version "
                                       "no longer waits for a slot",
                       {.shim = running->name});
        }
    }
    return pending;
}

void BackgroundStaging::stage_one(const Job& job, Running& running) {
    lower_this_threads_cpu_priority(m_log, job.shim.name);
    try {
        const std::unique_ptr<fetch::Downloader> downloader = m_make_downloader();
        Node node{job.root,    job.settings, job.store, job.detection,
                  *downloader, nullptr,      nullptr,   m_log};
        node.abandon = [&running] {
            return running.stop.load();
        };
        (void)stage_ahead(node, {job.shim});
    } catch (const std::exception& error) {
        // On a thread of its own an escaping exception would end the daemon (std::terminate).
        m_log.error(job.shim.name + ": staging ahead of its rollout slot failed: " + error.what(),
                    {.shim = job.shim.name});
    }
    running.ended = true;
    const std::uint64_t one = 1;
    (void)!::write(m_ended_signal.get(), &one, sizeof one);
}

} // namespace shimkeeper::reconcile
