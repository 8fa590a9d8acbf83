// What shimkeeper reads about an OCI source before any byte is trusted: references, manifests
// and indexes, the platform chosen from an index, registry challenges, auth files and
// containerd's registry host configuration. Files are real, in a temp folder per test.
#include "shimkeeper/fetch/oci/auth_file.hpp"
#include "shimkeeper/fetch/oci/challenge.hpp"
#include "shimkeeper/fetch/oci/hosts.hpp"
#include "shimkeeper/fetch/oci/manifest.hpp"
#include "shimkeeper/fetch/oci/platform.hpp"
#include "shimkeeper/spec/oci_reference.hpp"

#include "support/temp_dir_test.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace shimkeeper::fetch::oci {
namespace {
namespace fetch_oci_documents {

namespace fs = std::filesystem;
const std::string k_hex(64, 'a');
const std::string k_digest = "sha256:" + k_hex;

TEST(FetchOciReference, FullReferenceSplitsIntoItsParts) {
    auto ref = spec::parse_oci_reference("registry.example.org:5000/shims/spin:v1.0@" + k_digest);
    ASSERT_TRUE(ref) << ref.error().message();
    EXPECT_EQ(ref->registry, "registry.example.org:5000");
    EXPECT_EQ(ref->repository, "shims/spin");
    EXPECT_EQ(ref->tag, "v1.0");
    EXPECT_EQ(ref->digest, k_digest);
    EXPECT_EQ(ref->manifest_reference(), k_digest);
    EXPECT_EQ(spec::parse_oci_reference("localhost/a@sha256:" + std::string(64, 'A'))->digest,
              k_digest.substr(0, 7) + std::string(64, 'a'));
    EXPECT_EQ(spec::parse_oci_reference("ghcr.io/a/b:latest")->manifest_reference(), "latest");
}

TEST(FetchOciReference, RefusalsNameWhatIsWrong) {
    auto error = [](const std::string& text) {
        auto ref = spec::parse_oci_reference(text);
        EXPECT_FALSE(ref) << text;
        return ref ? std::string() : ref.error().message();
    };
    EXPECT_NE(error("spin@" + k_digest).find("no registry host"), std::string::npos);
    EXPECT_NE(error("library/spin@" + k_digest).find("'library' is not a registry host"),
              std::string::npos);
    EXPECT_NE(error("ghcr.io/Spin@" + k_digest).find("the repository 'Spin'"), std::string::npos);
    EXPECT_NE(error("ghcr.io/a//b").find("repository"), std::string::npos);
    EXPECT_NE(error("ghcr.io/a@sha256:abc").find("64 hexadecimal digits"), std::string::npos);
    EXPECT_NE(error("ghcr.io/a:-x").find("the tag '-x'"), std::string::npos);
}

TEST(FetchOciReference, PathsAreNormalisedOrRefused) {
    EXPECT_EQ(spec::normalise_oci_path("/usr/bin/shim"), "usr/bin/shim");
    EXPECT_EQ(spec::normalise_oci_path("shim.tar.gz"), "shim.tar.gz");
    EXPECT_FALSE(spec::normalise_oci_path("usr/../etc/shadow"));
    EXPECT_FALSE(spec::normalise_oci_path("./shim"));
    EXPECT_FALSE(spec::normalise_oci_path("usr//shim"));
    EXPECT_FALSE(spec::normalise_oci_path("usr/bin/"));
    EXPECT_FALSE(spec::normalise_oci_path(""));
}

std::string descriptor(const std::string& arch, const std::string& variant = "") {
    return R"({"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": ")" + k_digest +
           R"(", "size": 10, "platform": {"os": "linux", "architecture": ")" + arch + R"(")" +
           (variant.empty() ? "" : R"(, "variant": ")" + variant + "\"") + "}}";
}

TEST(FetchOciManifest, AnIndexResolvesToThisNodesPlatform) {
    std::string text = R"({"schemaVersion": 2, "manifests": [)" + descriptor("arm", "v7") + ", " +
                       descriptor("arm64", "v8") + ", " + descriptor("amd64") + "]}";
    auto document = parse_manifest(text, media::oci_index, "test");
    ASSERT_TRUE(document) << document.error().message();
    const auto& index = std::get<Index>(*document);
    auto chosen = select_platform(index, "arm64", "test");
    ASSERT_TRUE(chosen) << chosen.error().message();
    EXPECT_EQ(chosen->platform->architecture, "arm64");
    auto missing = select_platform(index, "s390x", "example.org/x@sha256:1");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().message(),
              "example.org/x@sha256:1 has no entry for this node's platform linux/s390x (it "
              "offers: linux/arm/v7, linux/arm64/v8, linux/amd64); use an image built for "
              "linux/s390x, or a per-platform [[shim.fetch.platform]] oci reference");
}

TEST(FetchOciManifest, AManifestGivesItsConfigAndLayers) {
    std::string text = R"({"schemaVersion": 2, "artifactType": "application/x.shim",
        "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": ")" +
                       k_digest + R"(", "size": 2},
        "layers": [{"mediaType": "application/octet-stream", "digest": ")" +
                       k_digest + R"(", "size": 7,
                    "annotations": {"org.opencontainers.image.title": "shim"}}]})";
    // Docker's Content-Type, no mediaType in the document: its shape decides.
    auto document = parse_manifest(text, "application/json", "test");
    ASSERT_TRUE(document) << document.error().message();
    const auto& manifest = std::get<Manifest>(*document);
    EXPECT_EQ(manifest.artifact_type, "application/x.shim");
    ASSERT_EQ(manifest.layers.size(), 1u);
    EXPECT_EQ(manifest.layers[0].size, 7u);
    EXPECT_EQ(manifest.layers[0].annotations.at("org.opencontainers.image.title"), "shim");
}

TEST(FetchOciManifest, BrokenDocumentsNameTheField) {
    auto error = [](const std::string& text) {
        auto document = parse_manifest(text, media::oci_manifest, "R");
        EXPECT_FALSE(document) << text;
        return document ? std::string() : document.error().message();
    };
    EXPECT_NE(error("[1]").find("R is not a usable OCI document: not a JSON object"),
              std::string::npos);
    EXPECT_NE(error(R"({"config": {"digest": "sha256:1", "size": 1}, "layers": []})")
                  .find("config.digest is missing or not sha256:<64 hex>"),
              std::string::npos);
    EXPECT_NE(error(R"({"config": {"digest": ")" + k_digest + R"(", "size": -1}, "layers": []})")
                  .find("config.size"),
              std::string::npos);
    EXPECT_NE(error(R"({"config": {"digest": ")" + k_digest + R"(", "size": 1}})")
                  .find("layers is missing"),
              std::string::npos);
}

TEST(FetchOciChallenge, BearerParametersAreUnquoted) {
    auto challenge = parse_challenge(
        R"(Bearer realm="https://auth.example.org/token",service="registry.example.org",scope="repository:a/b:pull")");
    ASSERT_TRUE(challenge);
    EXPECT_EQ(challenge->scheme, "bearer");
    EXPECT_EQ(challenge->param("realm"), "https://auth.example.org/token");
    EXPECT_EQ(challenge->param("service"), "registry.example.org");
    EXPECT_EQ(challenge->param("scope"), "repository:a/b:pull");
    EXPECT_EQ(parse_challenge("Basic realm=\"x\"")->scheme, "basic");
    EXPECT_FALSE(parse_challenge(""));
}

class FetchOciFiles : public shimkeeper::testing::TempDirTest {
protected:
    fs::path write(const std::string& name, const std::string& text) {
        fs::create_directories((m_dir / name).parent_path());
        std::ofstream(m_dir / name) << text;
        return m_dir / name;
    }
};

TEST_F(FetchOciFiles, TheMostSpecificAuthKeyWins) {
    // "user:pw" and "repo:pw" in base64.
    fs::path file = write("auth.json", R"({"auths": {
        "https://reg.example.org/v1/": {"auth": "dXNlcjpwdw=="},
        "reg.example.org/team/app": {"auth": "cmVwbzpwdw=="}}})");
    auto repo = find_credentials({m_dir / "missing.json", file}, "reg.example.org", "team/app");
    ASSERT_TRUE(repo && *repo);
    EXPECT_EQ((*repo)->basic, "cmVwbzpwdw==");
    EXPECT_EQ((*repo)->source, file);
    auto host = find_credentials({file}, "reg.example.org", "other");
    ASSERT_TRUE(host && *host);
    EXPECT_EQ((*host)->basic, "dXNlcjpwdw==");
    auto none = find_credentials({file}, "elsewhere.example.org", "team/app");
    ASSERT_TRUE(none);
    EXPECT_FALSE(*none);
}

TEST_F(FetchOciFiles, ABrokenAuthFileIsNamed) {
    fs::path file = write("auth.json", R"({"auths": {"reg.example.org": {"auth": "!!"}}})");
    auto found = find_credentials({file}, "reg.example.org", "a");
    ASSERT_FALSE(found);
    EXPECT_EQ(found.error().message(),
              "registry auth file " + file.string() +
                  ": auths.\"reg.example.org\".auth is not base64 of user:password; it must look "
                  "like {\"auths\": {\"HOST\": {\"auth\": \"<base64 of user:password>\"}}}");
}

TEST_F(FetchOciFiles, HostsTomlMirrorsComeFirstInFileOrder) {
    write("reg.example.org/hosts.toml", R"(server = "https://reg.example.org"
[host."https://zz-mirror.local:5000"]
  capabilities = ["pull"]
  ca = "mirror-ca.pem"
[host."http://aa-mirror.local/base"]
  override_path = true
)");
    auto hosts = registry_hosts(m_dir, "reg.example.org");
    ASSERT_TRUE(hosts) << hosts.error().message();
    ASSERT_EQ(hosts->size(), 3u);
    EXPECT_EQ((*hosts)[0].api_root, "https://zz-mirror.local:5000/v2");
    EXPECT_FALSE((*hosts)[0].resolve);
    EXPECT_TRUE((*hosts)[0].pull);
    EXPECT_EQ((*hosts)[0].ca_file, (m_dir / "reg.example.org" / "mirror-ca.pem").string());
    EXPECT_EQ((*hosts)[1].api_root, "http://aa-mirror.local/base");
    EXPECT_EQ((*hosts)[2].api_root, "https://reg.example.org/v2");
    EXPECT_FALSE((*hosts)[2].is_mirror);

    auto plain = registry_hosts(m_dir, "other.example.org");
    ASSERT_TRUE(plain);
    ASSERT_EQ(plain->size(), 1u);
    EXPECT_EQ((*plain)[0].api_root, "https://other.example.org/v2");

    write("bad.example.org/hosts.toml", "server = \"ftp://x\"\n");
    auto bad = registry_hosts(m_dir, "bad.example.org");
    ASSERT_FALSE(bad);
    EXPECT_NE(bad.error().message().find("'ftp://x' is not an http(s) URL"), std::string::npos);
}

} // namespace fetch_oci_documents
} // namespace
} // namespace shimkeeper::fetch::oci
