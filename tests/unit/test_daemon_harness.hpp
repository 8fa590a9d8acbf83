// Runs run_daemon() for real in a forked child: a real sd-event loop, real inotify on a temp
// folder, real signals, and sd_notify to a real datagram socket that plays systemd. Only the
// node transaction is faked (the recover/reconcile callbacks), and it reports what it saw
// through files, so every assertion is about what systemd, an operator or status.json sees.
// The socket is drained continuously, as systemd does: a datagram queue holds only
// net.unix.max_dgram_qlen messages (10 here), after which sd_notify blocks the daemon.
#pragma once

#include "shimkeeper/daemon/daemon.hpp"
#include "shimkeeper/util/fs.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <fstream>
#include <functional>
#include <gtest/gtest.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <poll.h>
#include <sstream>
#include <string>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace daemon_test {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using shimkeeper::daemon::DaemonConfig;
using shimkeeper::daemon::ReconcileFn;
using shimkeeper::daemon::ReconcileOutcome;

inline long long now_ms() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// How long a wait for something that should happen may take before the test fails. Only a hang
// should reach it: scripts/test runs these tests under ASan at nice 19 beside the scenarios, where
// a daemon's one-second step took over 5 s of wall time. What the tests promise about time is
// asserted otherwise: from the times the calls log (backoff), from what set off a reconcile
// (last_trigger), from how many ran; the slower path a wait must not mistake for the fast one,
// the drift check, is 4 to 6 minutes away (300 s, jittered by 20%).
inline constexpr std::chrono::milliseconds k_patience = 60s;

// Polls `condition` every 10 ms until it holds or `limit` passes.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds limit = k_patience) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!condition()) {
        if (std::chrono::steady_clock::now() > deadline) {
            return false;
        }
        std::this_thread::sleep_for(10ms);
    }
    return true;
}

inline void write_file(const fs::path& path, const std::string& text) {
    std::ofstream(path) << text;
}

// Like an editor or a package manager: a temp file renamed over the target.
inline void replace_file(const fs::path& path, const std::string& text) {
    fs::path temp = path.parent_path() / ("." + path.filename().string() + ".tmp");
    write_file(temp, text);
    fs::rename(temp, path);
}

inline std::vector<std::string> read_lines(const fs::path& path) {
    std::vector<std::string> lines;
    std::ifstream in(path);
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
    }
    return lines;
}

inline std::vector<std::string> toml_names(const fs::path& dir) {
    std::vector<std::string> names;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        std::string name = entry.path().filename().string();
        if (!name.starts_with('.') && entry.path().extension() == ".toml") {
            names.push_back(entry.path().stem().string());
        }
    }
    std::sort(names.begin(), names.end());
    return names;
}

class DaemonFixture : public testing::Test {
protected:
    void SetUp() override {
        m_dir = *shimkeeper::util::make_temp_dir(fs::temp_directory_path(), "sk-daemon-");
        fs::create_directories(etc());
        write_file(agent_config(), "# agent\n");
        m_config.watch_paths = {agent_config(), shims_d()};
        m_config.status_file = m_dir / "run" / "shimkeeper" / "status.json";
        m_config.debounce = 100ms;
        m_config.backoff_initial = 200ms;
        m_config.backoff_max = 800ms;
        m_socket = ::socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::string socket_path = (m_dir / "notify").string();
        socket_path.copy(address.sun_path, sizeof address.sun_path - 1);
        ASSERT_EQ(::bind(m_socket, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
        m_reader = std::thread([this] { read_notifications(); });
    }

    void TearDown() override {
        if (m_pid > 0) {
            ::kill(m_pid, SIGKILL);
            ::waitpid(m_pid, nullptr, 0);
        }
        m_stopping = true;
        if (m_reader.joinable()) {
            m_reader.join();
        }
        ::close(m_socket);
        if (!HasFailure()) {
            fs::remove_all(m_dir);
        } else {
            std::cerr << "kept " << m_dir << " for inspection\n";
        }
    }

    fs::path etc() const { return m_dir / "etc"; }
    fs::path agent_config() const { return etc() / "agent.toml"; }
    fs::path shims_d() const { return etc() / "shims.d"; }
    fs::path calls_log() const { return m_dir / "calls.log"; }

    // A fake transaction: logs "<name> <start ms> <end ms> ok|fail" and reports the *.toml
    // files it read in shims.d/ as the converged shims; fails while shims.d/broken.toml exists.
    ReconcileFn logging_reconcile() const {
        fs::path dir = shims_d();
        fs::path log = calls_log();
        return [dir, log] {
            long long start = now_ms();
            std::vector<std::string> names = toml_names(dir);
            bool broken = std::find(names.begin(), names.end(), "broken") != names.end();
            std::ofstream(log, std::ios::app)
                << "reconcile " << start << " " << now_ms() << (broken ? " fail" : " ok") << "\n";
            ReconcileOutcome outcome{!broken, true, "", {{"shims", names}}};
            outcome.summary = broken ? "shims.d/broken.toml: handler missing"
                                     : "converged: " + std::to_string(names.size()) + " shims";
            return outcome;
        };
    }

    ReconcileFn logging_recover() const {
        fs::path log = calls_log();
        return [log] {
            std::ofstream(log, std::ios::app) << "recover " << now_ms() << "\n";
            return ReconcileOutcome{true, false, "recovered", {}};
        };
    }

    // Forks; the child runs the daemon with these callbacks and `environment` set.
    void start(const ReconcileFn& recover, const ReconcileFn& reconcile,
               std::vector<std::pair<std::string, std::string>> environment = {}) {
        m_pid = ::fork();
        ASSERT_GE(m_pid, 0);
        if (m_pid == 0) {
            ::setenv("NOTIFY_SOCKET", (m_dir / "notify").c_str(), 1);
            for (const auto& [name, value] : environment) {
                std::string text = value == "$PID" ? std::to_string(::getpid()) : value;
                ::setenv(name.c_str(), text.c_str(), 1);
            }
            shimkeeper::util::Log log(shimkeeper::util::LogLevel::debug);
            ::_exit(shimkeeper::daemon::run_daemon(m_config, recover, reconcile, log));
        }
    }

    // Waits until a notify datagram received so far contains `field`, up to `limit`.
    bool wait_notify(const std::string& field, std::chrono::milliseconds limit = k_patience) {
        std::unique_lock lock(m_lock);
        return m_arrived.wait_for(lock, limit, [&] {
            return std::any_of(m_messages.begin(), m_messages.end(), [&](const std::string& m) {
                return m.find(field) != std::string::npos;
            });
        });
    }

    int count_messages(const std::string& field) {
        std::lock_guard lock(m_lock);
        return static_cast<int>(std::count_if(m_messages.begin(), m_messages.end(), [&](auto& m) {
            return m.find(field) != std::string::npos;
        }));
    }

    // The STATUS= most recently sent.
    std::string last_status() {
        std::lock_guard lock(m_lock);
        for (auto it = m_messages.rbegin(); it != m_messages.rend(); ++it) {
            auto at = it->find("STATUS=");
            if (at != std::string::npos) {
                return it->substr(at + 7, it->find('\n', at) - at - 7);
            }
        }
        return "";
    }

    nlohmann::json status_json() const {
        std::ifstream in(m_config.status_file);
        return nlohmann::json::parse(in, nullptr, false);
    }

    int count_calls(const std::string& prefix) const {
        auto lines = read_lines(calls_log());
        return static_cast<int>(std::count_if(
            lines.begin(), lines.end(), [&](auto& line) { return line.starts_with(prefix); }));
    }

    // SIGTERM (or `signal`), then the exit status, or -1 when it did not exit within `limit`.
    int stop(int signal = SIGTERM, std::chrono::milliseconds limit = k_patience) {
        ::kill(m_pid, signal);
        int status = 0;
        bool exited =
            eventually([&] { return ::waitpid(m_pid, &status, WNOHANG) == m_pid; }, limit);
        if (!exited) {
            return -1;
        }
        m_pid = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }

    bool alive() {
        if (m_pid > 0 && ::waitpid(m_pid, nullptr, WNOHANG) == m_pid) {
            m_pid = -1;
        }
        return m_pid > 0;
    }

    fs::path m_dir;
    DaemonConfig m_config;
    int m_socket = -1;
    pid_t m_pid = -1;

private:
    void read_notifications() {
        while (!m_stopping) {
            pollfd ready{m_socket, POLLIN, 0};
            if (::poll(&ready, 1, 50) != 1) {
                continue;
            }
            char buffer[4096];
            ssize_t n = ::recv(m_socket, buffer, sizeof buffer, MSG_DONTWAIT);
            if (n > 0) {
                std::lock_guard lock(m_lock);
                m_messages.emplace_back(buffer, static_cast<size_t>(n));
                m_arrived.notify_all();
            }
        }
    }

    std::mutex m_lock;
    std::condition_variable m_arrived;
    std::vector<std::string> m_messages;
    std::atomic<bool> m_stopping = false;
    std::thread m_reader;
};

} // namespace daemon_test
