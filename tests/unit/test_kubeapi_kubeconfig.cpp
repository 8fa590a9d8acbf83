// kubeconfig loading: the accepted shapes, and one test per refusal, each checking that the
// message names the file and the field.
#include "shimkeeper/kubeapi/bearer_token.hpp"
#include "shimkeeper/kubeapi/kubeconfig.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>

namespace fs = std::filesystem;

namespace {
namespace kubeapi_kubeconfig {

using shimkeeper::kubeapi::BearerToken;
using shimkeeper::kubeapi::load_kubeconfig;

// "-----BEGIN CERTIFICATE-----\nAAAA\n" in base64: the loader decodes, it does not parse PEM.
constexpr const char* k_pem64 = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCkFBQUEK";

class Kubeconfig : public testing::Test {
protected:
    void SetUp() override {
        m_dir = fs::temp_directory_path() /
                ("sk-kubeconfig-" + std::to_string(::getpid()) + "-" +
                 testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(m_dir);
        fs::create_directories(m_dir);
        write("ca.crt", "-----BEGIN CERTIFICATE-----\n");
        write("token", "tok-1\n");
    }
    void TearDown() override { fs::remove_all(m_dir); }

    fs::path write(const std::string& name, const std::string& text) {
        std::ofstream(m_dir / name) << text;
        return m_dir / name;
    }

    // A valid kubeconfig whose cluster and user bodies the test chooses.
    fs::path config(const std::string& cluster, const std::string& user,
                    const std::string& current = "ctx") {
        return write("config", "apiVersion: v1\nkind: Config\n"
                               "clusters:\n- name: c\n  cluster:\n" +
                                   cluster + "users:\n- name: u\n  user:\n" + user +
                                   "contexts:\n- name: ctx\n  context: {cluster: c, user: u, "
                                   "namespace: team}\ncurrent-context: " +
                                   current + "\n");
    }

    static std::string good_cluster() {
        return "    server: https://127.0.0.1:6443/\n    certificate-authority: ca.crt\n";
    }

    // Loading fails, naming the file and every fragment.
    void expect_refused(const fs::path& file, std::initializer_list<std::string> fragments) {
        auto loaded = load_kubeconfig(file);
        ASSERT_FALSE(loaded) << "accepted " << file;
        const std::string& message = loaded.error().message();
        EXPECT_NE(message.find(file.string()), std::string::npos) << message;
        for (const auto& fragment : fragments) {
            EXPECT_NE(message.find(fragment), std::string::npos)
                << "no \"" << fragment << "\" in: " << message;
        }
    }

    fs::path m_dir;
};

TEST_F(Kubeconfig, TokenAndRelativeCaFile) {
    auto loaded = load_kubeconfig(config(good_cluster(), "    token: abc\n"));
    ASSERT_TRUE(loaded) << loaded.error().message();
    EXPECT_EQ(loaded->server, "https://127.0.0.1:6443");
    EXPECT_EQ(loaded->certificate_authority.file, m_dir / "ca.crt");
    EXPECT_EQ(loaded->token, "abc");
    EXPECT_EQ(loaded->namespace_name, "team");
    EXPECT_EQ(loaded->context, "ctx");
}

TEST_F(Kubeconfig, InlineDataIsDecoded) {
    std::string cluster =
        "    server: https://k\n    certificate-authority-data: " + std::string(k_pem64) + "\n";
    std::string user = "    client-certificate-data: " + std::string(k_pem64) +
                       "\n    client-key-data: " + k_pem64 + "\n";
    auto loaded = load_kubeconfig(config(cluster, user));
    ASSERT_TRUE(loaded) << loaded.error().message();
    EXPECT_EQ(loaded->certificate_authority.pem, "-----BEGIN CERTIFICATE-----\nAAAA\n");
    EXPECT_EQ(loaded->client_key.pem, loaded->client_certificate.pem);
}

TEST_F(Kubeconfig, TokenFileIsReadAgainWhenItChanges) {
    auto loaded = load_kubeconfig(config(good_cluster(), "    tokenFile: token\n"));
    ASSERT_TRUE(loaded) << loaded.error().message();
    BearerToken token(*loaded);
    EXPECT_EQ(token.current().value(), "tok-1");
    // A rotation writes a new file and renames it over the old one: a new inode.
    write("token.new", "tok-2-longer\n");
    fs::rename(m_dir / "token.new", m_dir / "token");
    EXPECT_EQ(token.current().value(), "tok-2-longer");
    fs::remove(m_dir / "token");
    auto gone = token.current();
    ASSERT_FALSE(gone);
    EXPECT_NE(gone.error().message().find("tokenFile"), std::string::npos);
}

TEST_F(Kubeconfig, MissingFile) {
    auto loaded = load_kubeconfig(m_dir / "absent");
    ASSERT_FALSE(loaded);
    EXPECT_NE(loaded.error().message().find("absent"), std::string::npos);
}

TEST_F(Kubeconfig, NotYaml) {
    expect_refused(write("config", "clusters: [\n"), {"not valid YAML", "line"});
}

TEST_F(Kubeconfig, NotAMapping) {
    expect_refused(write("config", "- a\n- b\n"), {"the top level", "mapping"});
}

TEST_F(Kubeconfig, NoCurrentContext) {
    expect_refused(config(good_cluster(), "    token: a\n", "\"\""),
                   {"current-context", "missing"});
}

TEST_F(Kubeconfig, CurrentContextNotAString) {
    expect_refused(write("config", "current-context: [a]\n"),
                   {"current-context: must be a string"});
}

TEST_F(Kubeconfig, ContextNotAMapping) {
    auto file = write("config", "contexts: [{name: x, context: nope}]\ncurrent-context: x\n");
    expect_refused(file, {"contexts[0] (\"x\").context", "not a mapping"});
}

TEST_F(Kubeconfig, CurrentContextDangles) {
    expect_refused(config(good_cluster(), "    token: a\n", "other"),
                   {"current-context", "\"other\"", "contexts"});
}

TEST_F(Kubeconfig, ContextNamesAbsentCluster) {
    auto file = write("config", "clusters: []\nusers: [{name: u, user: {token: a}}]\n"
                                "contexts: [{name: x, context: {cluster: gone, user: u}}]\n"
                                "current-context: x\n");
    expect_refused(file, {"contexts[0] (\"x\").context.cluster", "\"gone\"", "clusters"});
}

TEST_F(Kubeconfig, ContextWithoutUser) {
    auto file = write("config", "clusters: [{name: c, cluster: {server: https://k}}]\n"
                                "contexts: [{name: x, context: {cluster: c}}]\n"
                                "current-context: x\n");
    expect_refused(file, {"contexts[0] (\"x\").context.user", "missing"});
}

TEST_F(Kubeconfig, ClustersNotAList) {
    auto file = write("config", "clusters: {a: b}\ncontexts: [{name: x, context: {cluster: c, "
                                "user: u}}]\ncurrent-context: x\n");
    expect_refused(file, {"clusters", "must be a list"});
}

TEST_F(Kubeconfig, ServerMissing) {
    expect_refused(config("    certificate-authority: ca.crt\n", "    token: a\n"),
                   {"clusters[0] (\"c\").cluster.server", "missing"});
}

TEST_F(Kubeconfig, ServerNotHttps) {
    expect_refused(config("    server: http://127.0.0.1:8080\n", "    token: a\n"),
                   {"cluster.server", "not https://"});
}

TEST_F(Kubeconfig, InsecureSkipVerifyRefused) {
    expect_refused(
        config(good_cluster() + "    insecure-skip-tls-verify: true\n", "    token: a\n"),
        {"cluster.insecure-skip-tls-verify", "always verified"});
}

TEST_F(Kubeconfig, CaFileUnreadable) {
    expect_refused(
        config("    server: https://k\n    certificate-authority: nope.crt\n", "    token: a\n"),
        {"cluster.certificate-authority", "nope.crt"});
}

TEST_F(Kubeconfig, CaDataNotBase64) {
    expect_refused(
        config("    server: https://k\n    certificate-authority-data: '%%%'\n", "    token: a\n"),
        {"cluster.certificate-authority-data", "base64"});
}

TEST_F(Kubeconfig, CaFileAndDataBoth) {
    expect_refused(config(good_cluster() + "    certificate-authority-data: " + k_pem64 + "\n",
                          "    token: a\n"),
                   {"certificate-authority and certificate-authority-data"});
}

TEST_F(Kubeconfig, ServerNotAString) {
    expect_refused(config("    server: [a, b]\n", "    token: a\n"),
                   {"cluster.server", "must be a string"});
}

TEST_F(Kubeconfig, NoCredentials) {
    expect_refused(config(good_cluster(), "    {}\n"), {"users[0] (\"u\").user", "no credentials"});
}

TEST_F(Kubeconfig, UserNotAMapping) {
    expect_refused(config(good_cluster(), "    \n"), {"users[0] (\"u\").user", "not a mapping"});
}

// A token file that is missing or empty is a credential refused at each request (the
// agent rides it out like a 401 and names the file to renew), never a kubeconfig that fails to
// load (which stopped the node's own files from applying).
TEST_F(Kubeconfig, TokenFileMissingOrEmptyIsARefusedCredentialNamingIt) {
    auto loaded = load_kubeconfig(config(good_cluster(), "    tokenFile: /nonexistent/token\n"));
    ASSERT_TRUE(loaded) << loaded.error().message();
    BearerToken missing(*loaded);
    auto refused = missing.current();
    ASSERT_FALSE(refused);
    EXPECT_EQ(refused.error().code(), shimkeeper::util::ErrorCode::refused);
    EXPECT_NE(refused.error().message().find("cannot read the kubeconfig's tokenFile "
                                             "/nonexistent/token"),
              std::string::npos)
        << refused.error().message();

    write("empty-token", "\n");
    auto with_empty = load_kubeconfig(config(good_cluster(), "    tokenFile: empty-token\n"));
    ASSERT_TRUE(with_empty) << with_empty.error().message();
    BearerToken empty(*with_empty);
    auto empty_refused = empty.current();
    ASSERT_FALSE(empty_refused);
    EXPECT_EQ(empty_refused.error().code(), shimkeeper::util::ErrorCode::refused);
    EXPECT_NE(empty_refused.error().message().find("empty-token is empty"), std::string::npos)
        << empty_refused.error().message();
}

TEST_F(Kubeconfig, CertificateWithoutKey) {
    expect_refused(config(good_cluster(), "    client-certificate: ca.crt\n"),
                   {"users[0] (\"u\").user", "client-certificate without client-key"});
}

TEST_F(Kubeconfig, KeyWithoutCertificate) {
    expect_refused(config(good_cluster(), "    client-key-data: " + std::string(k_pem64) + "\n"),
                   {"client-key without client-certificate"});
}

TEST_F(Kubeconfig, KeyDataNotBase64) {
    expect_refused(config(good_cluster(), "    client-certificate: ca.crt\n"
                                          "    client-key-data: abc\n"),
                   {"user.client-key-data", "base64"});
}

TEST_F(Kubeconfig, ExecPluginRefused) {
    expect_refused(config(good_cluster(), "    exec: {command: aws}\n"),
                   {"user.exec", "not supported"});
}

TEST_F(Kubeconfig, BasicAuthRefused) {
    expect_refused(config(good_cluster(), "    username: a\n    password: b\n"),
                   {"user.username", "not supported"});
}

} // namespace kubeapi_kubeconfig
} // namespace
