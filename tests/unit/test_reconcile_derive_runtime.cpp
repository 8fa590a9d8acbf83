// A Shim without runtimeType: the artifact's shim binary says it. Artifacts really tarred, really
// unpacked, and put in a real store on disk; `plan`'s network-free half of the derivation.
#include "shimkeeper/archive/unpack.hpp"
#include "shimkeeper/reconcile/derive_runtime.hpp"
#include "shimkeeper/reconcile/record.hpp"
#include "shimkeeper/store/locate_binary.hpp"
#include "shimkeeper/store/store.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>

namespace shimkeeper::reconcile {
namespace {
namespace reconcile_derive_runtime {

namespace fs = std::filesystem;

class DeriveRuntime : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "sk-derive-XXXXXX").string();
        ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
        m_dir = pattern;
        m_store.emplace(util::HostRoot(m_dir / "node"), "/var/lib/shimkeeper");
        ASSERT_TRUE(m_store->ensure_layout().has_value());
    }
    void TearDown() override {
        if (HasFailure()) {
            std::cerr << "kept test directory " << m_dir << "\n";
        } else {
            fs::remove_all(m_dir);
        }
    }

    // An artifact holding `files` (name -> executable), tarred by tar and unpacked.
    util::Expected<archive::UnpackResult> unpacked(const std::string& tag,
                                                   const std::map<std::string, bool>& files) {
        const fs::path src = m_dir / ("src-" + tag);
        const fs::path dest = m_dir / ("dest-" + tag);
        fs::create_directories(src);
        fs::create_directories(dest);
        for (const auto& [name, executable] : files) {
            fs::create_directories((src / name).parent_path());
            std::ofstream(src / name) << "#!/bin/sh\n";
            fs::permissions(src / name, executable ? fs::perms(0755) : fs::perms(0644));
        }
        const std::string tarball = (m_dir / (tag + ".tar.gz")).string();
        const std::string command = "tar -C '" + src.string() + "' -czf '" + tarball + "' .";
        EXPECT_EQ(std::system(command.c_str()), 0);
        return archive::unpack(tarball, dest, "unused");
    }

    // The artifact, committed to the store under `digest`.
    void stored(const std::string& digest, const std::map<std::string, bool>& files) {
        ASSERT_TRUE(unpacked(digest.substr(0, 4), files));
        ASSERT_TRUE(m_store->commit_artifact(m_dir / ("dest-" + digest.substr(0, 4)), digest));
    }

    static spec::ShimSpec from_artifact(const std::string& name, const std::string& handler,
                                        const std::string& digest) {
        spec::ShimSpec shim;
        shim.name = name;
        shim.handler = handler;
        shim.runtime_type = "io.containerd." + handler + ".v2";
        shim.binary = "containerd-shim-" + handler + "-v2";
        shim.runtime_type_from_artifact = true;
        shim.runtime_type_derivation = "to be derived from the artifact";
        shim.fetch.url = "https://e.org/" + name + ".tgz";
        shim.fetch.sha256 = digest;
        shim.location = {"Shim/" + name + "@1", 0, 0};
        return shim;
    }

    std::string reason(const std::map<std::string, bool>& files, const std::string& handler) {
        auto listing = unpacked("r" + std::to_string(++m_round), files);
        EXPECT_TRUE(listing);
        auto said = store::binary_saying_runtime_type(*listing, handler);
        EXPECT_FALSE(said) << "chose " << *said;
        return said ? "" : said.error().message();
    }

    fs::path m_dir;
    std::optional<store::Store> m_store;
    int m_round = 0;
};

const std::string k_digest_a(64, 'a');
const std::string k_digest_b(64, 'b');

TEST_F(DeriveRuntime, TheOneShimBinaryOfAnArchiveIsChosen) {
    auto listing = unpacked(
        "one",
        {{"bin/containerd-shim-wasmtime-v1", true}, {"LICENSE", false}, {"README.md", false}});
    ASSERT_TRUE(listing);
    EXPECT_EQ(store::binary_saying_runtime_type(*listing, "anything").value(),
              "containerd-shim-wasmtime-v1");
}

TEST_F(DeriveRuntime, OfSeveralTheHandlersIsChosen) {
    auto listing =
        unpacked("two", {{"containerd-shim-spin-v2", true}, {"containerd-shim-slight-v1", true}});
    ASSERT_TRUE(listing);
    EXPECT_EQ(store::binary_saying_runtime_type(*listing, "slight").value(),
              "containerd-shim-slight-v1");
    const std::string message =
        reason({{"containerd-shim-spin-v2", true}, {"containerd-shim-slight-v1", true}}, "wasm");
    EXPECT_NE(message.find("the artifact holds 2 shims (containerd-shim-slight-v1, "
                           "containerd-shim-spin-v2) and none named for the handler 'wasm'"),
              std::string::npos)
        << message;
}

TEST_F(DeriveRuntime, AnArtifactWhoseNamesSayNothingIsRefusedListingItsEntries) {
    const std::string message =
        reason({{"bin/lunar-shim", true}, {"containerd-shim-notes-v2", false}}, "lunar");
    for (const char* part :
         {"no executable in the artifact is named containerd-shim-<name>-v<N>",
          "the artifact holds: ", "bin/lunar-shim (executable)", "containerd-shim-notes-v2",
          "set spec.runtimeType (or spec.binary) in the Shim"}) {
        EXPECT_NE(message.find(part), std::string::npos) << part << " not in: " << message;
    }
}

TEST_F(DeriveRuntime, ABareExecutableCarriesNoName) {
    const fs::path bare = m_dir / "bare";
    std::ofstream(bare) << "#!/bin/sh\n";
    fs::create_directories(m_dir / "bare-dest");
    auto listing = archive::unpack(bare, m_dir / "bare-dest", "containerd-shim-x-v2");
    ASSERT_TRUE(listing) << listing.error().message();
    auto said = store::binary_saying_runtime_type(*listing, "x");
    ASSERT_FALSE(said);
    EXPECT_NE(said.error().message().find("a single executable, which carries no file name"),
              std::string::npos)
        << said.error().message();
}

TEST_F(DeriveRuntime, AHeldArtifactCompletesTheSpecWithoutTheNetwork) {
    stored(k_digest_a, {{"dist/containerd-shim-wasmtime-v1", true}});
    auto derived = derive_runtime_types({from_artifact("wasmtime", "wasmtime", k_digest_a)},
                                        nullptr, *m_store, nullptr);
    ASSERT_TRUE(derived) << derived.error().message();
    const spec::ShimSpec& shim = derived->front();
    EXPECT_FALSE(shim.runtime_type_from_artifact);
    EXPECT_EQ(shim.runtime_type, "io.containerd.wasmtime.v1");
    EXPECT_EQ(shim.binary, "containerd-shim-wasmtime-v1");
    EXPECT_EQ(shim.runtime_type_derivation,
              "derived from the artifact's containerd-shim-wasmtime-v1");
}

TEST_F(DeriveRuntime, WithoutTheArtifactAndWithoutTheNetworkTheGuessStays) {
    auto derived = derive_runtime_types({from_artifact("comet", "comet", k_digest_b)}, nullptr,
                                        *m_store, nullptr);
    ASSERT_TRUE(derived) << derived.error().message();
    EXPECT_TRUE(derived->front().runtime_type_from_artifact);
    EXPECT_EQ(derived->front().runtime_type, "io.containerd.comet.v2");
}

TEST_F(DeriveRuntime, AHeldArtifactThatSaysNothingFailsNamingTheShimAndEntries) {
    stored(k_digest_a, {{"lunar", true}});
    auto derived = derive_runtime_types({from_artifact("lunar", "lunar", k_digest_a)}, nullptr,
                                        *m_store, nullptr);
    ASSERT_FALSE(derived);
    const std::string message = derived.error().message();
    for (const char* part :
         {"shim 'lunar' (Shim/lunar@1): no runtimeType given, and the artifact sha256:aaaa",
          "the artifact holds: lunar (executable)"}) {
        EXPECT_NE(message.find(part), std::string::npos) << part << " not in: " << message;
    }
}

TEST_F(DeriveRuntime, TwoArtifactsNamingOneBinaryAreRefused) {
    stored(k_digest_a, {{"containerd-shim-spin-v2", true}});
    stored(k_digest_b, {{"containerd-shim-spin-v2", true}});
    auto derived = derive_runtime_types(
        {from_artifact("one", "one", k_digest_a), from_artifact("two", "two", k_digest_b)}, nullptr,
        *m_store, nullptr);
    ASSERT_FALSE(derived);
    EXPECT_NE(derived.error().message().find("binary 'containerd-shim-spin-v2' of shim 'two' is "
                                             "already used by shim 'one'"),
              std::string::npos)
        << derived.error().message();
}

// What runs was derived from the same artifact: the spec that has not looked yet is the same shim
// (no slot taken, no failure reported); another artifact is a difference.
TEST_F(DeriveRuntime, ASpecNotYetDerivedIsComparedWithWhatItsArtifactSaid) {
    stored(k_digest_a, {{"containerd-shim-wasmtime-v1", true}});
    const spec::ShimSpec waiting = from_artifact("wasmtime", "wasmtime", k_digest_a);
    auto derived = derive_runtime_types({waiting}, nullptr, *m_store, nullptr);
    ASSERT_TRUE(derived) << derived.error().message();
    const store::InstalledShim installed =
        record_of(derived->front(), k_digest_a, "containerd-shim-wasmtime-v1");

    const spec::ShimSpec same = as_derived_by(waiting, installed);
    EXPECT_EQ(same.runtime_type, "io.containerd.wasmtime.v1");
    EXPECT_TRUE(differences(record_of(same, k_digest_a, ""), installed).empty());
    // Without as_derived_by the handler's guess differs from what runs.
    EXPECT_FALSE(differences(record_of(waiting, k_digest_a, ""), installed).empty());

    const spec::ShimSpec other = from_artifact("wasmtime", "wasmtime", k_digest_b);
    auto reasons =
        differences(record_of(as_derived_by(other, installed), k_digest_b, ""), installed);
    ASSERT_EQ(reasons.size(), 1u);
    EXPECT_EQ(reasons.front(), "new artifact");

    spec::ShimSpec written = waiting;
    written.runtime_type_from_artifact = false; // a spec that wrote its runtime type is as it is
    EXPECT_EQ(as_derived_by(written, installed).runtime_type, "io.containerd.wasmtime.v2");
}

} // namespace reconcile_derive_runtime
} // namespace
} // namespace shimkeeper::reconcile
