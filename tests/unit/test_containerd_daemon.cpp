// A real containerd 1.6 (Debian's) started on a config edited by the engine, with private root,
// state and socket: it must serve, and its CRI plugin must load with the new runtime in its
// config. (Running a pod sandbox through the handler needs a CRI client and a pause image: the
// real-node tests under tests/node/ do that.)
#include "shimkeeper/containerd/plan.hpp"
#include "shimkeeper/containerd/program.hpp"
#include "shimkeeper/containerd/write.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "unit/child_process.hpp"

#include <chrono>
#include <csignal>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

namespace sc = shimkeeper::containerd;
namespace fs = std::filesystem;

namespace {
namespace containerd_daemon {

// A daemon this test owns: started with fork/exec, stopped (SIGTERM, then SIGKILL) on scope exit.
class Daemon {
public:
    Daemon(const std::vector<std::string>& argv, const fs::path& log) {
        m_pid = ::fork();
        if (m_pid == 0) {
            int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
            ::dup2(fd, STDOUT_FILENO);
            ::dup2(fd, STDERR_FILENO);
            std::vector<char*> args;
            for (const auto& arg : argv) {
                args.push_back(const_cast<char*>(arg.c_str()));
            }
            args.push_back(nullptr);
            ::execv(args[0], args.data());
            ::_exit(127);
        }
    }
    Daemon(const Daemon&) = delete;
    Daemon& operator=(const Daemon&) = delete;
    ~Daemon() {
        if (m_pid <= 0) {
            return;
        }
        shimkeeper::testing::stop_child(m_pid, std::chrono::seconds(10));
    }
    bool running() const { return m_pid > 0 && ::waitpid(m_pid, nullptr, WNOHANG) == 0; }

private:
    pid_t m_pid = -1;
};

std::string private_config(const fs::path& dir) {
    std::string d = dir.string();
    return "version = 2\n"
           "root = \"" +
           d +
           "/root\"\n"
           "state = \"" +
           d +
           "/state\"\n"
           "[grpc]\n  address = \"" +
           d +
           "/containerd.sock\"\n"
           "[ttrpc]\n  address = \"" +
           d +
           "/containerd.sock.ttrpc\"\n"
           "[debug]\n  address = \"\"\n"
           "[metrics]\n  address = \"\"\n"
           "[plugins.\"io.containerd.internal.v1.opt\"]\n  path = \"" +
           d +
           "/opt\"\n"
           "[plugins.\"io.containerd.grpc.v1.cri\"]\n"
           "  stream_server_port = \"0\"\n"
           "  [plugins.\"io.containerd.grpc.v1.cri\".cni]\n"
           "    bin_dir = \"" +
           d +
           "/cni/bin\"\n"
           "    conf_dir = \"" +
           d + "/cni/conf\"\n";
}

TEST(ContainerdDaemon, ServesWithTheEditedConfigAndLoadsCri) {
    if (::geteuid() != 0 || ::access("/usr/bin/containerd", X_OK) != 0 ||
        ::access("/usr/bin/ctr", X_OK) != 0) {
        GTEST_SKIP() << "needs root, /usr/bin/containerd and /usr/bin/ctr";
    }
    auto made = shimkeeper::util::make_temp_dir("/tmp", "sk-daemon-");
    ASSERT_TRUE(made.has_value());
    const fs::path dir = *made;
    const fs::path config = dir / "config.toml";
    ASSERT_TRUE(shimkeeper::util::write_file_atomic(config, private_config(dir)).has_value());

    shimkeeper::spec::ContainerdSettings settings;
    settings.config_path = config.string();
    settings.binary = "/usr/bin/containerd";
    auto detection = sc::detect(shimkeeper::util::HostRoot(), settings);
    ASSERT_TRUE(detection.has_value()) << detection.error().message();
    EXPECT_EQ(detection->socket, (dir / "containerd.sock").string());

    shimkeeper::spec::ShimSpec shim;
    shim.name = "spin-v2";
    shim.handler = "spin";
    shim.runtime_type = "io.containerd.spin.v2";
    shim.binary = "containerd-shim-spin-v2";
    auto runtime = sc::desired_runtime(shim, (dir / "store" / "bin" / shim.binary).string(),
                                       std::string(64, 'e'));
    auto changes = sc::plan_edits(*detection, {runtime}, shimkeeper::util::HostRoot());
    ASSERT_TRUE(changes.has_value()) << changes.error().message();
    ASSERT_EQ(changes->size(), 1u);
    ASSERT_TRUE(sc::prevalidate(*detection, changes->front(), {}).has_value());
    ASSERT_TRUE(sc::write_change(changes->front(), {}).has_value());

    {
        Daemon containerd({"/usr/bin/containerd", "--config", config.string()},
                          dir / "containerd.log");
        const std::string address = (dir / "containerd.sock").string();
        std::string plugins;
        bool served = false;
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!served && std::chrono::steady_clock::now() < deadline && containerd.running()) {
            auto out = sc::run_program({"/usr/bin/ctr", "--address", address, "plugins", "ls"},
                                       std::chrono::seconds(10));
            served = out && out->exit_code == 0;
            plugins = out ? out->output : "";
            if (!served) {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        }
        ASSERT_TRUE(served) << "containerd did not serve; log: "
                            << shimkeeper::util::read_file(dir / "containerd.log").value_or("");
        bool cri_ok = false;
        for (const auto& line : sc::split_lines(plugins)) {
            cri_ok = cri_ok || (line.find("io.containerd.grpc.v1") != std::string::npos &&
                                line.find(" cri ") != std::string::npos &&
                                line.find(" ok") != std::string::npos);
        }
        EXPECT_TRUE(cri_ok) << plugins;
        std::string log = shimkeeper::util::read_file(dir / "containerd.log").value_or("");
        EXPECT_EQ(log.find("failed to load plugin io.containerd.grpc.v1.cri"), std::string::npos)
            << log;
    }
    fs::remove_all(dir);
}

} // namespace containerd_daemon
} // namespace
