// plan_edits, prevalidate and write_change against the real disk and Debian's real containerd
// 1.6: the edited file is what `containerd config dump` reads back.
#include "shimkeeper/containerd/config_edit.hpp"
#include "shimkeeper/containerd/config_facts.hpp"
#include "shimkeeper/containerd/diff.hpp"
#include "shimkeeper/containerd/plan.hpp"
#include "shimkeeper/containerd/program.hpp"
#include "shimkeeper/containerd/report.hpp"
#include "shimkeeper/containerd/write.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "unit/source_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

namespace sc = shimkeeper::containerd;
namespace fs = std::filesystem;

namespace {
namespace containerd_plan {

const fs::path k_inputs = shimkeeper::testing::source_dir() / "tests/fixtures/containerd/input";

sc::DesiredRuntime spin() {
    shimkeeper::spec::ShimSpec shim;
    shim.name = "spin-v2";
    shim.handler = "spin";
    shim.runtime_type = "io.containerd.spin.v2";
    shim.binary = "containerd-shim-spin-v2";
    return sc::desired_runtime(shim, "/var/lib/shimkeeper/bin/" + shim.binary,
                               std::string(64, 'd'));
}

class Plan : public testing::Test {
protected:
    void SetUp() override {
        if (::access("/usr/bin/containerd", X_OK) != 0) {
            GTEST_SKIP() << "Debian's containerd is not installed";
        }
        auto dir = shimkeeper::util::make_temp_dir(fs::temp_directory_path(), "sk-plan-");
        ASSERT_TRUE(dir.has_value());
        m_dir = *dir;
        m_root = shimkeeper::util::HostRoot(m_dir);
        fs::create_directories(m_root.on_host("/usr/bin"));
        fs::create_symlink("/usr/bin/containerd", m_root.on_host("/usr/bin/containerd"));
    }
    void TearDown() override {
        if (!HasFailure() && !m_dir.empty()) {
            fs::remove_all(m_dir);
        } else if (!m_dir.empty()) {
            std::cerr << "kept " << m_dir << "\n";
        }
    }
    sc::Detection detect() {
        auto d = sc::detect(m_root, {});
        EXPECT_TRUE(d.has_value()) << d.error().message();
        return d.value_or(sc::Detection{});
    }
    std::vector<sc::FileChange> plan(const sc::Detection& d,
                                     const std::vector<sc::DesiredRuntime>& desired) {
        auto changes = sc::plan_edits(d, desired, m_root);
        EXPECT_TRUE(changes.has_value()) << changes.error().message();
        return changes.value_or(std::vector<sc::FileChange>{});
    }
    std::string config_dump(const fs::path& host_path) {
        auto out = sc::run_program(
            {"/usr/bin/containerd", "--config", host_path.string(), "config", "dump"},
            std::chrono::seconds(30));
        EXPECT_TRUE(out.has_value());
        EXPECT_EQ(out->exit_code, 0) << out->output;
        return out.value_or(sc::ProgramResult{}).output;
    }

    fs::path m_dir;
    shimkeeper::util::HostRoot m_root;
};

TEST_F(Plan, MissingConfigIsCreatedFromContainerdsDefaultAndRemovedWithTheLastShim) {
    auto d = detect();
    auto changes = plan(d, {spin()});
    ASSERT_EQ(changes.size(), 1u);
    const auto& change = changes.front();
    EXPECT_FALSE(change.before.has_value());
    ASSERT_TRUE(change.after.has_value());
    EXPECT_TRUE(change.created_by_shimkeeper);
    EXPECT_TRUE(sc::needs_restart(d, changes));
    EXPECT_TRUE(sc::unified_diff(change).starts_with("--- /dev/null\n+++ b/etc/containerd/"));

    auto check = sc::prevalidate(d, change, m_root);
    ASSERT_TRUE(check.has_value()) << check.error().message();
    EXPECT_TRUE(check->checked);
    ASSERT_TRUE(sc::write_change(change, m_root).has_value());

    // containerd reads the runtime back, pointing at the node path (1.6: absolute runtime_type).
    std::string dump = config_dump(m_root.on_host("/etc/containerd/config.toml"));
    EXPECT_NE(dump.find("[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.spin]"),
              std::string::npos)
        << dump;
    EXPECT_NE(dump.find("runtime_type = \"/var/lib/shimkeeper/bin/containerd-shim-spin-v2\""),
              std::string::npos);
    EXPECT_EQ(change.after->find(m_dir.string()), std::string::npos)
        << "no path written into the config may start with --root";

    auto again = plan(detect(), {spin()});
    EXPECT_TRUE(again.empty()) << "second plan must be empty";
    EXPECT_FALSE(sc::needs_restart(d, again));

    auto removal = plan(detect(), {});
    ASSERT_EQ(removal.size(), 1u);
    EXPECT_FALSE(removal.front().after.has_value()) << "shimkeeper created it: remove it";
    ASSERT_TRUE(sc::write_change(removal.front(), m_root).has_value());
    EXPECT_FALSE(fs::exists(m_root.on_host("/etc/containerd/config.toml")));
}

TEST_F(Plan, ExistingConfigKeepsModeAndASecondWriteTouchesNothing) {
    fs::path host = m_root.on_host("/etc/containerd/config.toml");
    fs::create_directories(host.parent_path());
    fs::copy_file(k_inputs / "comments.toml", host);
    ::chmod(host.c_str(), 0600);

    auto d = detect();
    auto changes = plan(d, {spin()});
    ASSERT_EQ(changes.size(), 1u);
    std::string diff = sc::unified_diff(changes.front());
    EXPECT_TRUE(diff.starts_with("--- a/etc/containerd/config.toml\n+++ "
                                 "b/etc/containerd/config.toml\n@@ "))
        << diff;
    EXPECT_NE(diff.find("\n+[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.spin]\n"),
              std::string::npos)
        << diff;
    ASSERT_TRUE(sc::prevalidate(d, changes.front(), m_root).has_value());
    ASSERT_TRUE(sc::write_change(changes.front(), m_root).has_value());

    struct stat first {};
    ASSERT_EQ(::stat(host.c_str(), &first), 0);
    EXPECT_EQ(first.st_mode & 07777, 0600u);
    EXPECT_NE(config_dump(host).find("runtimes.spin]"), std::string::npos);

    ASSERT_TRUE(sc::write_change(changes.front(), m_root).has_value());
    struct stat second {};
    ASSERT_EQ(::stat(host.c_str(), &second), 0);
    EXPECT_EQ(first.st_ino, second.st_ino) << "identical content must not be rewritten";
    EXPECT_EQ(first.st_mtim.tv_nsec, second.st_mtim.tv_nsec);
    EXPECT_TRUE(plan(detect(), {spin()}).empty());
}

TEST_F(Plan, PrevalidationFailsWithContainerdsOwnMessageAndWritesNothing) {
    std::string bad = "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n"
                      "  enable_selinux = \"yes please\"\n";
    fs::path host = m_root.on_host("/etc/containerd/config.toml");
    fs::create_directories(host.parent_path());
    ASSERT_TRUE(shimkeeper::util::write_file_atomic(host, bad).has_value());
    auto d = detect();
    auto changes = plan(d, {spin()});
    ASSERT_EQ(changes.size(), 1u);
    auto check = sc::prevalidate(d, changes.front(), m_root);
    ASSERT_FALSE(check.has_value());
    EXPECT_NE(check.error().message().find("yes please"), std::string::npos)
        << check.error().message();
    EXPECT_EQ(shimkeeper::util::read_file(host).value_or(""), bad);
    for (const auto& entry : fs::directory_iterator(host.parent_path())) {
        EXPECT_EQ(entry.path(), host) << "candidate left behind";
    }
}

TEST_F(Plan, PreviousContentIsKeptAndRestored) {
    fs::path host = m_root.on_host("/etc/containerd/config.toml");
    fs::create_directories(host.parent_path());
    fs::copy_file(k_inputs / "v2.toml", host);
    auto changes = plan(detect(), {spin()});
    ASSERT_EQ(changes.size(), 1u);
    fs::path backup = m_dir / "state/generations/1";
    ASSERT_TRUE(sc::keep_previous(changes.front(), backup).has_value());
    ASSERT_TRUE(sc::write_change(changes.front(), m_root).has_value());

    auto restore = sc::restore_previous("/etc/containerd/config.toml", backup, m_root);
    ASSERT_TRUE(restore.has_value()) << restore.error().message();
    ASSERT_TRUE(sc::write_change(*restore, m_root).has_value());
    EXPECT_EQ(shimkeeper::util::read_file(host).value_or(""),
              shimkeeper::util::read_file(k_inputs / "v2.toml").value_or("x"));
}

TEST_F(Plan, VersionThreeConfigIsRefusedOnContainerd16) {
    fs::path host = m_root.on_host("/etc/containerd/config.toml");
    fs::create_directories(host.parent_path());
    fs::copy_file(k_inputs / "v3.toml", host);
    auto changes = sc::plan_edits(detect(), {spin()}, m_root);
    ASSERT_FALSE(changes.has_value());
    EXPECT_NE(changes.error().message().find("1.6."), std::string::npos);
}

TEST_F(Plan, K3sTemplateIsCreatedAroundTheBaseTemplateAndRemovedAgain) {
    fs::path generated = m_root.on_host("/var/lib/rancher/k3s/agent/etc/containerd/config.toml");
    fs::create_directories(generated.parent_path());
    fs::copy_file(k_inputs / "v2.toml", generated);
    shimkeeper::spec::ContainerdSettings settings;
    auto d = sc::detect(m_root, settings);
    ASSERT_TRUE(d.has_value());
    auto changes = plan(*d, {spin()});
    ASSERT_EQ(changes.size(), 1u);
    EXPECT_EQ(changes.front().node_path,
              "/var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl");
    EXPECT_NE(changes.front().after->find("\n{{ template \"base\" . }}\n"), std::string::npos);
    auto check = sc::prevalidate(*d, changes.front(), m_root);
    ASSERT_TRUE(check.has_value());
    EXPECT_FALSE(check->checked) << "a template cannot go through config dump";
    ASSERT_TRUE(sc::write_change(changes.front(), m_root).has_value());

    auto removal = plan(*sc::detect(m_root, settings), {});
    ASSERT_EQ(removal.size(), 1u);
    EXPECT_FALSE(removal.front().after.has_value());
}

} // namespace containerd_plan
} // namespace

namespace {
namespace containerd_plan {

TEST_F(Plan, Containerd2WithImportsGetsADropInAndStaleRootBlocksGoAway) {
    // No containerd 2.x here: a script that prints a 2.0 version stands in for the binary.
    fs::path binary = m_root.on_host("/usr/bin/containerd");
    fs::remove(binary);
    ASSERT_TRUE(
        shimkeeper::util::write_file_atomic(
            binary, "#!/bin/sh\necho containerd github.com/containerd/containerd v2.0.4 x\n", 0755)
            .has_value());
    fs::path root_config = m_root.on_host("/etc/containerd/config.toml");
    fs::create_directories(root_config.parent_path());
    std::string imports = shimkeeper::util::read_file(k_inputs / "imports.toml").value_or("");
    // A block left from the days of containerd 1.7, when the root config was edited in place.
    auto old = sc::edit_config_text(
        imports, {"/etc/containerd/config.toml", sc::runtimes_path(3), {}, {}}, {spin()});
    ASSERT_TRUE(old.has_value()) << old.error().message();
    ASSERT_TRUE(shimkeeper::util::write_file_atomic(root_config, *old).has_value());

    auto d = detect();
    ASSERT_EQ(d.mode, sc::Detection::Mode::drop_in);
    auto changes = plan(d, {spin()});
    ASSERT_EQ(changes.size(), 2u);
    EXPECT_EQ(changes[0].node_path, "/etc/containerd/conf.d/shimkeeper.toml");
    EXPECT_FALSE(changes[0].before.has_value());
    EXPECT_NE(changes[0].after->find("\nversion = 3\n"), std::string::npos) << *changes[0].after;
    EXPECT_NE(changes[0].after->find("runtime_path = \"/var/lib/shimkeeper/bin/"),
              std::string::npos);
    EXPECT_EQ(changes[0].after->find("@default-runtime"), std::string::npos)
        << "2.x merges drop-ins: runc stays";
    EXPECT_EQ(changes[1].node_path, "/etc/containerd/config.toml");
    EXPECT_EQ(changes[1].after, imports) << "the root gets back exactly its own content";
}

} // namespace containerd_plan
} // namespace

namespace {
namespace containerd_plan {

TEST_F(Plan, JsonReportsTheSameAsText) {
    auto d = detect();
    auto changes = plan(d, {spin()});
    auto json = sc::plan_json(d, changes);
    ASSERT_EQ(json["files"].size(), 1u);
    EXPECT_EQ(json["files"][0]["path"], "/etc/containerd/config.toml");
    EXPECT_EQ(json["files"][0]["action"], "create");
    EXPECT_EQ(json["files"][0]["diff"], sc::unified_diff(changes.front()));
    EXPECT_EQ(json["restart_needed"], true);
    EXPECT_EQ(sc::plan_json(d, {})["restart_needed"], false);

    auto status = sc::detection_json(d);
    EXPECT_EQ(status["flavor"], "containerd");
    EXPECT_EQ(status["binary_version"].get<std::string>().substr(0, 4), "1.6.");
    EXPECT_FALSE(status["reasons"].empty());
}

} // namespace containerd_plan
} // namespace
