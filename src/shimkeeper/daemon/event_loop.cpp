// run_daemon(): the sd-event loop. One inotify source per watched directory (watch_plan.hpp),
// one timer whose deadline is always Schedule::next() (schedule.hpp), SIGTERM/SIGINT as signal
// sources, and the watchdog pinged by sd-event itself. Idle, the process wakes only for the
// drift timer and systemd's watchdog; the timer's accuracy lets the kernel batch those wakeups.
#include "shimkeeper/daemon/backoff.hpp"
#include "shimkeeper/daemon/daemon.hpp"
#include "shimkeeper/daemon/notifier.hpp"
#include "shimkeeper/daemon/schedule.hpp"
#include "shimkeeper/daemon/sdevent_handles.hpp"
#include "shimkeeper/daemon/watch_plan.hpp"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <ctime>
#include <exception>
#include <memory>
#include <random>
#include <sys/epoll.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <systemd/sd-daemon.h>

namespace shimkeeper::daemon {

namespace {

using std::chrono::milliseconds;

// Changes that never pause are read anyway after this many quiet periods (5 s by default).
constexpr int k_max_debounce_factor = 10;

Instant monotonic_now() {
    timespec now{};
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    return std::chrono::seconds(now.tv_sec) +
           std::chrono::duration_cast<Instant>(std::chrono::nanoseconds(now.tv_nsec));
}

ReconcileOutcome call_guarded(const ReconcileFn& fn, const char* what) {
    // Exceptions are caught at the top, as cli/app.cpp does for every command, and here: a bug
    // in a transaction must become a failed attempt with backoff, not a dead daemon.
    try {
        return fn();
    } catch (const std::exception& e) {
        return {false, false, std::string("internal error in ") + what + ": " + e.what(), {}};
    } catch (...) {
        return {false, false, std::string("internal error in ") + what, {}};
    }
}

class DaemonLoop {
public:
    DaemonLoop(const DaemonConfig& config, const ReconcileFn& recover, const ReconcileFn& reconcile,
               const util::Log& log)
        : m_config(config), m_recover(recover), m_reconcile(reconcile), m_log(log),
          m_schedule(SchedulePolicy{config.debounce, config.debounce * k_max_debounce_factor,
                                    config.backoff_initial, config.backoff_max}),
          m_jitter(std::random_device{}()), m_notifier(config.status_file, log) {}

    util::Expected<int> run() {
        TRY(setup());
        refresh_watches(true);
        attempt(Trigger::startup);
        m_notifier.ready();
        TRY(arm_timer());
        return TRY(sd_check(sd_event_loop(m_event.get()), "running the event loop"));
    }

private:
    struct Source {
        DaemonLoop* loop;
        const ChangeSource* source;
        SdEventSource io;
    };

    struct Watch {
        DaemonLoop* loop;
        DirWatch plan;
        dev_t dev;
        ino_t ino;
        SdEventSource source;
    };

    util::Expected<void> setup() {
        sigset_t stop_signals;
        sigemptyset(&stop_signals);
        sigaddset(&stop_signals, SIGTERM);
        sigaddset(&stop_signals, SIGINT);
        // sd-event reads signals through a signalfd, which only sees blocked signals. They stay
        // blocked while a reconcile runs: that is what lets the transaction finish first.
        if (int rc = ::pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr); rc != 0) {
            return std::unexpected(util::Error::from_errno(util::ErrorCode::internal,
                                                           "blocking SIGTERM and SIGINT", rc));
        }
        sd_event* event = nullptr;
        TRY(sd_check(sd_event_default(&event), "creating the sd-event loop"));
        m_event.reset(event);
        for (int signal : {SIGTERM, SIGINT}) {
            sd_event_source* source = nullptr;
            TRY(sd_check(sd_event_add_signal(m_event.get(), &source, signal, on_signal, this),
                         "watching for signal " + std::to_string(signal)));
            m_signals.emplace_back(source);
        }
        int watchdog = TRY(sd_check(sd_event_set_watchdog(m_event.get(), true),
                                    "enabling systemd's watchdog (WATCHDOG_USEC)"));
        m_notifier.set_watchdog(watchdog > 0);
        sd_event_source* timer = nullptr;
        TRY(sd_check(sd_event_add_time(m_event.get(), &timer, CLOCK_MONOTONIC, UINT64_MAX, 0,
                                       on_timer, this),
                     "creating the reconcile timer"));
        m_timer.reset(timer);
        for (const ChangeSource& change_source : m_config.change_sources) {
            m_sources.push_back(std::make_unique<Source>(Source{this, &change_source, nullptr}));
            sd_event_source* io = nullptr;
            TRY(sd_check(sd_event_add_io(m_event.get(), &io, change_source.fd, EPOLLIN,
                                         on_source_ready, m_sources.back().get()),
                         "watching " + change_source.name));
            m_sources.back()->io.reset(io);
        }
        return {};
    }

    // Brings the inotify sources in line with the watch plan and the directories on disk now:
    // adds watches for directories that appeared, re-adds those whose directory was replaced.
    void refresh_watches(bool startup) {
        auto is_directory = [](const std::filesystem::path& path) {
            struct stat info {};
            return ::stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode);
        };
        std::vector<DirWatch> plan = plan_watches(m_config.watch_paths, is_directory);
        std::erase_if(m_watches, [&](const std::unique_ptr<Watch>& watch) {
            struct stat info {};
            bool same_dir = ::stat(watch->plan.dir.c_str(), &info) == 0 &&
                            info.st_dev == watch->dev && info.st_ino == watch->ino;
            return !same_dir || std::find(plan.begin(), plan.end(), watch->plan) == plan.end();
        });
        for (DirWatch& wanted : plan) {
            bool present = std::any_of(m_watches.begin(), m_watches.end(),
                                       [&](const auto& watch) { return watch->plan == wanted; });
            if (!present) {
                add_watch(std::move(wanted), startup);
            }
        }
    }

    void add_watch(DirWatch plan, bool startup) {
        struct stat info {};
        if (::stat(plan.dir.c_str(), &info) != 0) {
            if (startup) {
                m_log.warning("not watching " + plan.dir.string() +
                              ": it does not exist; it is looked for again at every reconcile, "
                              "and the periodic drift check still picks up changes");
            }
            return;
        }
        auto watch = std::make_unique<Watch>(Watch{this, plan, info.st_dev, info.st_ino, nullptr});
        sd_event_source* source = nullptr;
        auto added =
            sd_check(sd_event_add_inotify(m_event.get(), &source, plan.dir.c_str(),
                                          inotify_mask(plan.kind), on_inotify, watch.get()),
                     "watching " + plan.dir.string() + " with inotify");
        if (!added) {
            m_log.warning(added.error().message() +
                          "; changes there are picked up by the periodic drift check only");
            return;
        }
        watch->source.reset(source);
        m_log.debug("watching " + plan.dir.string());
        m_watches.push_back(std::move(watch));
    }

    void attempt(Trigger why) {
        refresh_watches(false);
        m_notifier.attempt_started(why);
        ReconcileOutcome outcome;
        if (!m_recovered) {
            outcome = call_guarded(m_recover, "recovery");
            m_recovered = outcome.ok;
            if (!outcome.ok) {
                outcome.summary = "recovering an unfinished transaction: " + outcome.summary;
            }
        }
        if (m_recovered) {
            outcome = call_guarded(m_reconcile, "reconcile");
        }
        Instant done = monotonic_now();
        milliseconds drift = m_config.drift_interval.count() > 0
                                 ? m_jitter.apply(m_config.drift_interval, Jitter::k_drift_spread)
                                 : std::chrono::hours(24 * 365);
        if (outcome.ok && outcome.recheck_after) {
            drift = std::min(drift, *outcome.recheck_after);
        }
        m_schedule.on_outcome(outcome.ok, done, drift);
        std::optional<milliseconds> retry_in;
        if (auto retry_at = m_schedule.retry_at()) {
            retry_in = std::chrono::ceil<milliseconds>(*retry_at - done);
        }
        m_notifier.attempt_finished(why, outcome, m_schedule.consecutive_failures(), retry_in);
    }

    util::Expected<void> arm_timer() {
        Due due = m_schedule.next();
        Instant now = monotonic_now();
        auto wait = std::max(due.at - now, Instant{0});
        // Late by at most a tenth of the wait (1 ms .. 1 s): lets the kernel coalesce wakeups.
        auto accuracy = std::clamp<Instant>(wait / 10, milliseconds{1}, std::chrono::seconds{1});
        m_due = due.why;
        TRY(sd_check(sd_event_source_set_time(m_timer.get(), static_cast<uint64_t>(due.at.count())),
                     "setting the reconcile timer"));
        TRY(sd_check(sd_event_source_set_time_accuracy(m_timer.get(),
                                                       static_cast<uint64_t>(accuracy.count())),
                     "setting the reconcile timer's accuracy"));
        TRY(sd_check(sd_event_source_set_enabled(m_timer.get(), SD_EVENT_ONESHOT),
                     "enabling the reconcile timer"));
        return {};
    }

    int finish_dispatch(util::Expected<void> armed) {
        if (!armed) {
            m_log.error(armed.error().message());
            sd_event_exit(m_event.get(), 1);
        }
        return 0;
    }

    static int on_timer(sd_event_source*, uint64_t, void* userdata) {
        auto* self = static_cast<DaemonLoop*>(userdata);
        self->attempt(self->m_due);
        return self->finish_dispatch(self->arm_timer());
    }

    static int on_inotify(sd_event_source*, const struct inotify_event* event, void* userdata) {
        auto* watch = static_cast<Watch*>(userdata);
        DaemonLoop* self = watch->loop;
        std::string_view name = event->len > 0 ? std::string_view(event->name) : "";
        if (!is_relevant(watch->plan, name, event->mask)) {
            return 0;
        }
        self->m_log.debug("change seen in " + watch->plan.dir.string() +
                          (name.empty() ? std::string() : "/" + std::string(name)));
        self->m_schedule.on_change(monotonic_now());
        return self->finish_dispatch(self->arm_timer());
    }

    static int on_source_ready(sd_event_source*, int, uint32_t, void* userdata) {
        auto* source = static_cast<Source*>(userdata);
        DaemonLoop* self = source->loop;
        bool changed = false;
        try {
            changed = source->source->on_ready();
        } catch (const std::exception& e) {
            self->m_log.error(source->source->name + ": " + e.what());
            changed = true; // reconcile: it reads the source afresh and reports what is wrong
        }
        if (!changed) {
            return 0;
        }
        self->m_log.debug("change seen by " + source->source->name);
        const bool urgent = source->source->urgent && source->source->urgent();
        self->m_schedule.on_change(monotonic_now(), urgent, source->source->debounce);
        return self->finish_dispatch(self->arm_timer());
    }

    static int on_signal(sd_event_source*, const struct signalfd_siginfo* info, void* userdata) {
        auto* self = static_cast<DaemonLoop*>(userdata);
        self->m_notifier.stopping(static_cast<int>(info->ssi_signo));
        return sd_event_exit(self->m_event.get(), 0);
    }

    const DaemonConfig& m_config;
    const ReconcileFn& m_recover;
    const ReconcileFn& m_reconcile;
    const util::Log& m_log;
    Schedule m_schedule;
    Jitter m_jitter;
    Notifier m_notifier;
    bool m_recovered = false;
    Trigger m_due = Trigger::drift;
    // Members are destroyed in reverse order: the watches, signals and timer before their loop.
    SdEvent m_event;
    SdEventSource m_timer;
    std::vector<SdEventSource> m_signals;
    std::vector<std::unique_ptr<Watch>> m_watches;
    std::vector<std::unique_ptr<Source>> m_sources;
};

} // namespace

int run_daemon(const DaemonConfig& config, const ReconcileFn& recover, const ReconcileFn& reconcile,
               const util::Log& log) {
    DaemonLoop loop(config, recover, reconcile, log);
    auto result = loop.run();
    if (!result) {
        log.error("shimkeeper run: " + result.error().message());
        return 1;
    }
    return *result;
}

void watchdog_keepalive() {
    // Called from download progress (often): one ping a second is plenty for any WatchdogSec.
    static std::atomic<std::int64_t> last_ping_ms{0};
    const std::int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                                 std::chrono::steady_clock::now().time_since_epoch())
                                 .count();
    if (now - last_ping_ms.load() < 1'000) {
        return;
    }
    last_ping_ms = now;
    if (sd_watchdog_enabled(0, nullptr) > 0) {
        sd_notify(0, "WATCHDOG=1");
    }
}

} // namespace shimkeeper::daemon
