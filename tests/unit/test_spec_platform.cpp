// [[shim.fetch.platform]]: this node's entry is chosen whichever alias either side uses; a
// missing or doubled architecture is refused with every place named.
#include "shimkeeper/spec/desired_state.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::spec {
namespace {
namespace spec_platform {

const std::string k_amd_digest(64, 'a');
const std::string k_arm_digest(64, 'b');

// Line 5 is the first [[shim.fetch.platform]], line 9 the second.
std::string platform_shim(const std::string& first_arch, const std::string& second_arch) {
    return "[[shim]]\n"
           "name = \"spin\"\n"
           "handler = \"spin\"\n"
           "runtime_type = \"io.containerd.spin.v2\"\n"
           "[[shim.fetch.platform]]\n"
           "arch = \"" +
           first_arch +
           "\"\n"
           "url = \"https://example.org/spin-amd.tar.gz\"\n"
           "sha256 = \"" +
           k_amd_digest +
           "\"\n"
           "[[shim.fetch.platform]]\n"
           "arch = \"" +
           second_arch +
           "\"\n"
           "url = \"https://example.org/spin-arm.tar.gz\"\n"
           "sha256 = \"" +
           k_arm_digest + "\"\n";
}

util::Expected<DesiredState> parse(const std::string& text, const std::string& arch) {
    return parse_desired_state_text(text, "p.toml", arch, false);
}

TEST(SpecPlatform, ChoosesTheEntryForThisNode) {
    auto amd = parse(platform_shim("amd64", "arm64"), "amd64");
    ASSERT_TRUE(amd) << amd.error().message();
    EXPECT_EQ(amd->shims[0].fetch.url, "https://example.org/spin-amd.tar.gz");
    EXPECT_EQ(amd->shims[0].fetch.sha256, k_amd_digest);

    auto arm = parse(platform_shim("amd64", "arm64"), "arm64");
    ASSERT_TRUE(arm) << arm.error().message();
    EXPECT_EQ(arm->shims[0].fetch.url, "https://example.org/spin-arm.tar.gz");
    EXPECT_EQ(arm->shims[0].fetch.sha256, k_arm_digest);
}

TEST(SpecPlatform, KernelAliasesInTheFileMatchTheNode) {
    auto amd = parse(platform_shim("x86_64", "aarch64"), "amd64");
    ASSERT_TRUE(amd) << amd.error().message();
    EXPECT_EQ(amd->shims[0].fetch.url, "https://example.org/spin-amd.tar.gz");

    auto arm = parse(platform_shim("X86_64", "AArch64"), normalise_architecture("aarch64"));
    ASSERT_TRUE(arm) << arm.error().message();
    EXPECT_EQ(arm->shims[0].fetch.url, "https://example.org/spin-arm.tar.gz");
}

TEST(SpecPlatform, NoEntryForThisNodeListsWhatExists) {
    auto state = parse(platform_shim("amd64", "aarch64"), "riscv64");
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().code(), util::ErrorCode::invalid_input);
    EXPECT_EQ(state.error().message(),
              "p.toml:5:1: no [[shim.fetch.platform]] entry matches this node's architecture "
              "'riscv64' (entries exist for: amd64, arm64); add an entry with arch = \"riscv64\"");
}

TEST(SpecPlatform, TwoEntriesForOneArchitectureNameBoth) {
    auto state = parse(platform_shim("amd64", "x86_64"), "arm64");
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().message(),
              "p.toml:9:1: a second [[shim.fetch.platform]] for architecture 'amd64' (the first "
              "is at p.toml:5:1); keep one entry per architecture");
}

TEST(SpecPlatform, EveryEntryIsValidatedNotOnlyTheChosenOne) {
    std::string text = platform_shim("amd64", "arm64");
    text.replace(text.find("https://example.org/spin-arm"), 5, "ftp");
    auto state = parse(text, "amd64");
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().message(), "p.toml:11:7: url scheme 'ftp' is not supported; use "
                                       "https://, http:// or file:// (in [[shim.fetch.platform]])");
}

TEST(SpecPlatform, EntryWithoutSha256NeedsAllowUnverified) {
    std::string text = platform_shim("amd64", "arm64");
    text.erase(text.rfind("sha256"));
    auto state = parse(text, "amd64");
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().message(),
              "p.toml:9:1: [[shim.fetch.platform]] has no sha256, so the download could not be "
              "verified; add sha256 = \"<64 hex digits from sha256sum>\", or set "
              "allow_unverified = true in the [[shim]] to accept an unverified download");

    text.insert(text.find("[[shim.fetch.platform]]"), "allow_unverified = true\n");
    auto allowed = parse(text, "arm64");
    ASSERT_TRUE(allowed) << allowed.error().message();
    EXPECT_FALSE(allowed->shims[0].fetch.sha256);
}

TEST(SpecPlatform, EntryWithoutArch) {
    std::string text = platform_shim("amd64", "arm64");
    text.erase(text.find("arch = \"arm64\"\n"), 15);
    auto state = parse(text, "amd64");
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().message(), "p.toml:9:1: [[shim.fetch.platform]] is missing required "
                                       "key 'arch'; add e.g. arch = \"amd64\"");
}

TEST(SpecPlatform, ArchWithStrayCharacters) {
    auto state = parse(platform_shim("amd64", "linux/arm64"), "amd64");
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().message(),
              "p.toml:10:8: 'arch' in [[shim.fetch.platform]] must be an architecture name such "
              "as amd64, arm64, x86_64 or aarch64, got \"linux/arm64\"");
}

TEST(SpecPlatform, UnknownPlatformKeySuggestsClosest) {
    std::string text = platform_shim("amd64", "arm64");
    text.replace(text.find("arch = \"arm64\""), 4, "arc");
    auto state = parse(text, "amd64");
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().message(),
              "p.toml:10:1: unknown key 'arc' in [[shim.fetch.platform]]; did you mean 'arch'?");
}

TEST(SpecPlatform, BothFormsAtOnceAreRefused) {
    std::string text = platform_shim("amd64", "arm64");
    text.insert(text.find("[[shim.fetch.platform]]"),
                "[shim.fetch]\nurl = \"https://example.org/any.tar.gz\"\n");
    auto state = parse(text, "amd64");
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().message(),
              "p.toml:6:7: [shim.fetch] has both url/sha256 and [[shim.fetch.platform]] entries; "
              "use one form: a single url + sha256, or a [[shim.fetch.platform]] entry (arch, "
              "url, sha256) for each architecture");
}

TEST(SpecPlatform, PlatformAsPlainTableIsRefused) {
    auto state = parse("[[shim]]\nname = \"a\"\nhandler = \"a\"\n"
                       "runtime_type = \"io.containerd.a.v2\"\n"
                       "[shim.fetch.platform]\narch = \"amd64\"\n",
                       "amd64");
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().message(),
              "p.toml:5:1: 'platform' in [shim.fetch] must be an array of tables: write one "
              "[[shim.fetch.platform]] (arch, url, sha256) per architecture");
}

} // namespace spec_platform
} // namespace
} // namespace shimkeeper::spec
