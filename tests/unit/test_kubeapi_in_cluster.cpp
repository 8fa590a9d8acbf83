// The in-cluster configuration and the choice between it and a kubeconfig: what a Pod's
// environment gives, and one test per refusal, each naming the variable or the file.
#include "shimkeeper/kubeapi/in_cluster.hpp"
#include "support/temp_dir_test.hpp"

#include <fstream>
#include <gtest/gtest.h>

namespace fs = std::filesystem;

namespace {
namespace kubeapi_in_cluster {

using shimkeeper::kubeapi::in_cluster_config;
using shimkeeper::kubeapi::InClusterEnvironment;
using shimkeeper::kubeapi::kubeconfig_or_in_cluster;

class InCluster : public shimkeeper::testing::TempDirTest {
protected:
    void SetUp() override {
        TempDirTest::SetUp();
        write("ca.crt", "-----BEGIN CERTIFICATE-----\n");
        write("token", "tok-1\n");
        write("namespace", "shimkeeper-system");
    }
    void write(const std::string& name, const std::string& text) {
        std::ofstream(m_dir / name) << text;
    }
    InClusterEnvironment pod(std::string host = "10.96.0.1", std::string port = "443") const {
        return {host, port, m_dir};
    }
    static void expect_refused(const InClusterEnvironment& environment, const std::string& says) {
        auto config = in_cluster_config(environment);
        ASSERT_FALSE(config) << "accepted";
        EXPECT_NE(config.error().message().find(says), std::string::npos)
            << config.error().message();
    }
};

TEST_F(InCluster, ServerCaTokenFileAndNamespaceComeFromThePod) {
    auto config = in_cluster_config(pod());
    ASSERT_TRUE(config) << config.error().message();
    EXPECT_EQ(config->server, "https://10.96.0.1:443");
    EXPECT_EQ(config->certificate_authority.file, m_dir / "ca.crt");
    EXPECT_TRUE(config->token.empty());
    EXPECT_EQ(config->token_file, m_dir / "token"); // read at each request, so it can rotate
    EXPECT_EQ(config->namespace_name, "shimkeeper-system");
}

TEST_F(InCluster, AnIpv6ServiceHostIsBracketed) {
    auto config = in_cluster_config(pod("fd00:10:96::1", "6443"));
    ASSERT_TRUE(config) << config.error().message();
    EXPECT_EQ(config->server, "https://[fd00:10:96::1]:6443");
}

TEST_F(InCluster, HalfAnEnvironmentNamesTheMissingVariable) {
    expect_refused({std::string("10.96.0.1"), std::nullopt, m_dir},
                   "KUBERNETES_SERVICE_PORT is not set");
    expect_refused({std::nullopt, std::string("443"), m_dir}, "KUBERNETES_SERVICE_HOST is not set");
    expect_refused(pod("", "443"), "KUBERNETES_SERVICE_HOST is not set");
}

TEST_F(InCluster, APortOutOfRangeIsRefused) {
    for (const char* port : {"0", "65536", "https", "44 3", "-1"}) {
        SCOPED_TRACE(port);
        expect_refused(pod("10.96.0.1", port),
                       "KUBERNETES_SERVICE_PORT=\"" + std::string(port) + "\" is not a port");
    }
}

TEST_F(InCluster, AMissingOrEmptyFileIsNamed) {
    for (const char* name : {"token", "ca.crt", "namespace"}) {
        SCOPED_TRACE(name);
        fs::remove(m_dir / name);
        expect_refused(pod(), "cannot read " + (m_dir / name).string());
        write(name, "\n");
        expect_refused(pod(), (m_dir / name).string() + " is empty");
        write(name, "x");
    }
}

TEST_F(InCluster, AKubeconfigGivenWinsOverThePod) {
    std::ofstream(m_dir / "kubeconfig") << "apiVersion: v1\nkind: Config\n"
                                           "clusters: [{name: c, cluster: {server: "
                                           "'https://127.0.0.1:6443'}}]\n"
                                           "users: [{name: u, user: {token: abc}}]\n"
                                           "contexts: [{name: x, context: {cluster: c, user: u}}]\n"
                                           "current-context: x\n";
    auto config = kubeconfig_or_in_cluster(m_dir / "kubeconfig", "unused", pod());
    ASSERT_TRUE(config) << config.error().message();
    EXPECT_EQ(config->server, "https://127.0.0.1:6443");
    EXPECT_EQ(config->token, "abc");
}

TEST_F(InCluster, WithoutAKubeconfigThePodsConfigurationIsUsed) {
    auto config = kubeconfig_or_in_cluster(std::nullopt, "unused", pod());
    ASSERT_TRUE(config) << config.error().message();
    EXPECT_EQ(config->server, "https://10.96.0.1:443");
}

TEST_F(InCluster, NeitherKubeconfigNorPodIsOneErrorNamingBoth) {
    auto config = kubeconfig_or_in_cluster(std::nullopt, "/etc/x.toml names no [kube] kubeconfig",
                                           {std::nullopt, std::nullopt, m_dir});
    ASSERT_FALSE(config);
    const std::string message = config.error().message();
    EXPECT_NE(message.find("/etc/x.toml names no [kube] kubeconfig"), std::string::npos) << message;
    EXPECT_NE(message.find("KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find(m_dir.string()), std::string::npos) << message;
}

} // namespace kubeapi_in_cluster
} // namespace
