// Detection against node layouts built on the real disk under a temp --root. The containerd
// binary is Debian's real one; a containerd 2.x is a two-line script printing a version (a fake
// at the process edge: no 2.x binary exists here).
#include "shimkeeper/containerd/detection.hpp"
#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "unit/source_dir.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>

namespace sc = shimkeeper::containerd;
namespace fs = std::filesystem;

namespace {
namespace containerd_detect {

const fs::path k_inputs = shimkeeper::testing::source_dir() / "tests/fixtures/containerd/input";

class Detect : public testing::Test {
protected:
    void SetUp() override {
        auto dir = shimkeeper::util::make_temp_dir(fs::temp_directory_path(), "sk-detect-");
        ASSERT_TRUE(dir.has_value());
        m_dir = *dir;
        m_root = shimkeeper::util::HostRoot(m_dir);
    }
    void TearDown() override {
        if (!HasFailure()) {
            fs::remove_all(m_dir);
        } else {
            std::cerr << "kept " << m_dir << "\n";
        }
    }
    void put(const std::string& node_path, const std::string& content, mode_t mode = 0644) {
        fs::path host = m_root.on_host(node_path);
        fs::create_directories(host.parent_path());
        ASSERT_TRUE(shimkeeper::util::write_file_atomic(host, content, mode).has_value());
    }
    void put_fixture(const std::string& node_path, const std::string& fixture) {
        put(node_path, shimkeeper::util::read_file(k_inputs / fixture).value_or("missing"));
    }
    // The real Debian containerd, seen at /usr/bin/containerd inside the root.
    void real_binary() {
        fs::create_directories(m_root.on_host("/usr/bin"));
        fs::create_symlink("/usr/bin/containerd", m_root.on_host("/usr/bin/containerd"));
    }
    void fake_binary(const std::string& node_path, const std::string& version) {
        put(node_path,
            "#!/bin/sh\necho containerd github.com/containerd/containerd " + version +
                " 0123abcd\n",
            0755);
    }
    sc::Detection detect(shimkeeper::spec::ContainerdSettings settings = {}) {
        auto d = sc::detect(m_root, settings);
        EXPECT_TRUE(d.has_value()) << d.error().message();
        return d.value_or(sc::Detection{});
    }

    fs::path m_dir;
    shimkeeper::util::HostRoot m_root;
};

TEST_F(Detect, PlainContainerdWithDebiansBinaryIsEditedInPlace) {
    real_binary();
    put_fixture("/etc/containerd/config.toml", "v2.toml");
    auto d = detect();
    EXPECT_EQ(d.flavor, sc::Flavor::containerd);
    EXPECT_EQ(d.config_path, "/etc/containerd/config.toml");
    EXPECT_EQ(d.target_path, "/etc/containerd/config.toml");
    EXPECT_EQ(d.mode, sc::Detection::Mode::in_place);
    EXPECT_EQ(d.config_version, 2);
    EXPECT_EQ(d.cri_plugin, "io.containerd.grpc.v1.cri");
    ASSERT_TRUE(d.binary_version.has_value());
    EXPECT_EQ(d.binary_version->major, 1);
    EXPECT_EQ(d.binary_version->minor, 6);
    EXPECT_EQ(d.socket, "/run/containerd/containerd.sock");
    EXPECT_EQ(d.unit, "containerd.service");
    EXPECT_TRUE(d.config_exists);
    EXPECT_FALSE(d.reasons.empty());
}

// OCI shims come from the mirrors containerd's own images come from: its CRI registry folder.
TEST_F(Detect, TheRegistryHostFolderIsReadFromTheCriImagesConfig) {
    put("/etc/containerd/config.toml", "version = 2\n"
                                       "[plugins.\"io.containerd.grpc.v1.cri\".registry]\n"
                                       "  config_path = \"/etc/containerd/certs.d\"\n");
    EXPECT_EQ(detect().registry_config_path, "/etc/containerd/certs.d");
    put("/etc/containerd/config.toml", "version = 3\n"
                                       "[plugins.\"io.containerd.cri.v1.images\".registry]\n"
                                       "  config_path = \"/srv/hosts\"\n");
    EXPECT_EQ(detect().registry_config_path, "/srv/hosts");
    put("/etc/containerd/config.toml", "version = 2\n");
    EXPECT_FALSE(detect().registry_config_path);
}

TEST_F(Detect, VersionFourSocketComesFromTheServerPlugin) {
    fake_binary("/usr/bin/containerd", "v2.3.0");
    put_fixture("/etc/containerd/config.toml", "v4.toml");
    auto d = detect();
    EXPECT_EQ(d.config_version, 4);
    EXPECT_EQ(d.cri_plugin, "io.containerd.cri.v1.runtime");
    EXPECT_EQ(d.socket, "/run/containerd/v4.sock");
}

TEST_F(Detect, DropInOnlyOnContainerd2WhenTheRootImportsIt) {
    put_fixture("/etc/containerd/config.toml", "imports.toml");
    fake_binary("/usr/bin/containerd", "v2.0.4");
    auto d = detect();
    EXPECT_EQ(d.mode, sc::Detection::Mode::drop_in);
    EXPECT_EQ(d.target_path, "/etc/containerd/conf.d/shimkeeper.toml");
    EXPECT_EQ(d.config_version, 3);

    fake_binary("/usr/bin/containerd", "v1.7.20");
    d = detect();
    EXPECT_EQ(d.mode, sc::Detection::Mode::in_place) << "1.x replaces whole plugin tables";
    EXPECT_EQ(d.target_path, "/etc/containerd/config.toml");

    put_fixture("/etc/containerd/config.toml", "v3.toml"); // imports nothing
    fake_binary("/usr/bin/containerd", "v2.0.4");
    d = detect();
    EXPECT_EQ(d.mode, sc::Detection::Mode::in_place);
}

TEST_F(Detect, K3sEditsTheTemplateNotTheGeneratedConfig) {
    put_fixture("/var/lib/rancher/k3s/agent/etc/containerd/config.toml", "v2.toml");
    auto d = detect();
    EXPECT_EQ(d.flavor, sc::Flavor::k3s);
    EXPECT_EQ(d.target_path, "/var/lib/rancher/k3s/agent/etc/containerd/config.toml.tmpl");
    EXPECT_EQ(d.masking, sc::Masking::go_template);
    EXPECT_EQ(d.unit, "k3s.service");
    EXPECT_FALSE(d.target_exists);
    EXPECT_EQ(d.socket, "/run/containerd/containerd.sock") << "from the generated [grpc]";

    put("/etc/systemd/system/k3s-agent.service", "[Service]\n");
    put_fixture("/var/lib/rancher/k3s/agent/etc/containerd/config-v3.toml.tmpl",
                "k3s_config.toml.tmpl");
    d = detect();
    EXPECT_EQ(d.unit, "k3s-agent.service");
    EXPECT_EQ(d.target_path, "/var/lib/rancher/k3s/agent/etc/containerd/config-v3.toml.tmpl");
    EXPECT_TRUE(d.target_exists);
    EXPECT_EQ(d.config_version, 2) << "the template has no version: the generated config's";
}

TEST_F(Detect, Microk8sAndK0s) {
    put_fixture("/var/snap/microk8s/current/args/containerd-template.toml",
                "microk8s_containerd-template.toml");
    auto d = detect();
    EXPECT_EQ(d.flavor, sc::Flavor::microk8s);
    EXPECT_EQ(d.target_path, "/var/snap/microk8s/current/args/containerd-template.toml");
    EXPECT_EQ(d.unit, "snap.microk8s.daemon-containerd.service");
    EXPECT_EQ(d.socket, "/var/snap/microk8s/common/run/containerd.sock");

    shimkeeper::spec::ContainerdSettings k0s;
    k0s.flavor = "k0s";
    fs::create_directories(m_root.on_host("/etc/k0s/containerd.d"));
    d = detect(k0s);
    EXPECT_EQ(d.flavor, sc::Flavor::k0s);
    EXPECT_EQ(d.mode, sc::Detection::Mode::drop_in);
    EXPECT_EQ(d.target_path, "/etc/k0s/containerd.d/shimkeeper.toml");
    EXPECT_TRUE(d.unit.empty()) << "k0s needs no restart";
}

TEST_F(Detect, MissingConfigTakesContainerdsOwnDefault) {
    real_binary();
    auto d = detect();
    EXPECT_FALSE(d.config_exists);
    ASSERT_TRUE(d.default_config.has_value());
    EXPECT_NE(d.default_config->find("io.containerd.grpc.v1.cri"), std::string::npos);
    EXPECT_EQ(d.config_version, 2);
}

TEST_F(Detect, NoBinaryMeansUnknownVersionAndSaysSo) {
    put_fixture("/etc/containerd/config.toml", "v2.toml");
    shimkeeper::spec::ContainerdSettings settings;
    settings.binary = "/nowhere/containerd";
    auto d = detect(settings);
    EXPECT_FALSE(d.binary_version.has_value());
    bool said = false;
    for (const auto& reason : d.reasons) {
        said = said || reason.find("/nowhere/containerd") != std::string::npos;
    }
    EXPECT_TRUE(said);
}

TEST_F(Detect, BadFlavorAndBadVersionAreReported) {
    shimkeeper::spec::ContainerdSettings settings;
    settings.flavor = "docker";
    auto d = sc::detect(m_root, settings);
    ASSERT_FALSE(d.has_value());
    EXPECT_NE(d.error().message().find("docker"), std::string::npos);

    put("/etc/containerd/config.toml", "version = 9\n");
    d = sc::detect(m_root, {});
    ASSERT_FALSE(d.has_value());
    EXPECT_NE(d.error().message().find("/etc/containerd/config.toml:1"), std::string::npos);
}

} // namespace containerd_detect
} // namespace
