// The grammars behind the loader's refusals, checked value by value: names, runtime types,
// derived binaries, architecture aliases, urls, digests and key suggestions.
#include "shimkeeper/spec/desired_state.hpp"
#include "shimkeeper/spec/suggest.hpp"

#include <gtest/gtest.h>
#include <sys/utsname.h>

namespace shimkeeper::spec {
namespace {
namespace spec_names {

TEST(SpecNames, ValidNames) {
    for (std::string_view name :
         {"a", "0", "spin", "spin-v2", "wasm.edge_1", "a-b.c_d", "kata-qemu"}) {
        EXPECT_TRUE(is_valid_name(name)) << name;
    }
    EXPECT_TRUE(is_valid_name(std::string(63, 'z')));
}

TEST(SpecNames, InvalidNames) {
    for (std::string_view name : {"", "Spin", "-spin", "spin-", "spin.", "_spin", "spin v2",
                                  "spin/v2", "spin:v2", "spïn", "a\n"}) {
        EXPECT_FALSE(is_valid_name(name)) << name;
    }
    EXPECT_FALSE(is_valid_name(std::string(64, 'z')));
}

TEST(SpecNames, DefaultBinaryFollowsContainerdNaming) {
    EXPECT_EQ(default_binary_for("io.containerd.spin.v2"), "containerd-shim-spin-v2");
    EXPECT_EQ(default_binary_for("io.containerd.runc.v2"), "containerd-shim-runc-v2");
    EXPECT_EQ(default_binary_for("io.containerd.kata-qemu.v2"), "containerd-shim-kata-qemu-v2");
    EXPECT_EQ(default_binary_for("io.containerd.wasmtime.v1"), "containerd-shim-wasmtime-v1");
    // containerd uses the last two parts only.
    EXPECT_EQ(default_binary_for("io.containerd.vendor.slight.v1"), "containerd-shim-slight-v1");
    EXPECT_EQ(default_binary_for("/opt/shims/containerd-shim-x-v2"), "containerd-shim-x-v2");
    EXPECT_EQ(default_binary_for("noversion"), "");
}

TEST(SpecNames, RuntimeTypeGrammar) {
    for (std::string_view ok :
         {"io.containerd.spin.v2", "io.containerd.runc.v2", "io.containerd.kata-qemu.v2",
          "io.containerd.wasm_edge.v1", "io.containerd.vendor.slight.v10",
          "/usr/bin/containerd-shim-x-v2", "/opt/./shim"}) {
        EXPECT_FALSE(runtime_type_problem(ok)) << ok;
    }
    for (std::string_view bad :
         {"", "io.containerd.spin", "io.containerd.v2", "io.containerd.-spin.v2",
          "io.containerd.spin.V2", "io.containerd.spin.v", "io.containerd.sp in.v2",
          "iox.containerd.spin.v2", "relative/path", "/a/../b", "/a/..", "/a/b/", "/a b", "/a\"b",
          "/a`b", "/a\tb"}) {
        EXPECT_TRUE(runtime_type_problem(bad)) << bad;
    }
}

TEST(SpecNames, BinaryNames) {
    EXPECT_FALSE(binary_problem("containerd-shim-spin-v2"));
    EXPECT_FALSE(binary_problem(std::string(255, 'b')));
    for (std::string bad :
         {std::string(), std::string("a/b"), std::string(".."), std::string("a..b"),
          std::string("."), std::string("a b"), std::string("a\x01"), std::string(256, 'b')}) {
        EXPECT_TRUE(binary_problem(bad)) << bad;
    }
}

TEST(SpecNames, Versions) {
    EXPECT_FALSE(version_problem(""));
    EXPECT_FALSE(version_problem("0.17.0+build 1"));
    EXPECT_TRUE(version_problem("1\x7f"));
    EXPECT_TRUE(version_problem("1\t"));
    EXPECT_TRUE(version_problem(std::string(129, '1')));
}

TEST(SpecNames, Urls) {
    for (std::string_view ok :
         {"https://example.org/a.tgz", "HTTP://127.0.0.1:8080/a", "file:///srv/a.tar.gz"}) {
        EXPECT_FALSE(url_problem(ok)) << ok;
    }
    EXPECT_EQ(url_problem("gopher://x/y"),
              "url scheme 'gopher' is not supported; use https://, http:// or file://");
    EXPECT_EQ(url_problem("https:x"), "url must be https://...");
    EXPECT_TRUE(url_problem("https://a/\x01"));
    EXPECT_TRUE(url_problem(":x"));
}

TEST(SpecNames, Sha256IsNormalisedToLowercase) {
    EXPECT_EQ(normalise_sha256(std::string(32, 'A') + std::string(32, '9')),
              std::string(32, 'a') + std::string(32, '9'));
    EXPECT_FALSE(normalise_sha256(std::string(63, 'a')));
    EXPECT_FALSE(normalise_sha256(std::string(65, 'a')));
    EXPECT_FALSE(normalise_sha256(std::string(63, 'a').append(1, 'z')));
}

TEST(SpecNames, ArchitectureAliases) {
    EXPECT_EQ(normalise_architecture("x86_64"), "amd64");
    EXPECT_EQ(normalise_architecture("AMD64"), "amd64");
    EXPECT_EQ(normalise_architecture("aarch64"), "arm64");
    EXPECT_EQ(normalise_architecture("arm64"), "arm64");
    EXPECT_EQ(normalise_architecture("armv7l"), "arm");
    EXPECT_EQ(normalise_architecture("i686"), "386");
    EXPECT_EQ(normalise_architecture("ppc64le"), "ppc64le");
    EXPECT_EQ(normalise_architecture("loongarch64"), "loong64");
    EXPECT_EQ(normalise_architecture("Sparc64"), "sparc64"); // unknown: lowercased
}

TEST(SpecNames, NodeArchitectureIsUnameNormalised) {
    struct utsname info {};
    ASSERT_EQ(::uname(&info), 0);
    const std::string arch = node_architecture();
    EXPECT_EQ(arch, normalise_architecture(info.machine));
    EXPECT_EQ(normalise_architecture(arch), arch); // already canonical
    if (std::string_view(info.machine) == "x86_64") {
        EXPECT_EQ(arch, "amd64");
    }
}

TEST(SpecNames, KeySuggestions) {
    EXPECT_EQ(closest_word("sha265", {"url", "sha256", "platform"}), "sha256");
    EXPECT_EQ(closest_word("URL", {"url", "sha256"}), "url");
    EXPECT_EQ(closest_word("runtime-type", {"runtime_type", "runtime_class"}), "runtime_type");
    EXPECT_EQ(closest_word("retry", {"retries", "max_size"}), "retries");
    EXPECT_EQ(closest_word("zzz", {"url", "sha256"}), std::nullopt);
    EXPECT_EQ(closest_word("ur", {"url"}), "url");
    EXPECT_EQ(closest_word("x", {"url"}), std::nullopt);
}

TEST(SpecNames, LocationToString) {
    EXPECT_EQ((Location{"shims.d/spin.toml", 3, 1}.to_string()), "shims.d/spin.toml:3:1");
}

} // namespace spec_names
} // namespace
} // namespace shimkeeper::spec
