// state.json on the real disk: round trip, a fresh node, and every way the file can be wrong.
#include "shimkeeper/store/state.hpp"
#include "shimkeeper/util/atomic_file.hpp"

#include "support/temp_dir_test.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>

namespace shimkeeper::store {
namespace {
namespace store_state {

namespace fs = std::filesystem;

class StoreStateFile : public testing::TempDirTest {
protected:
    fs::path file() const { return m_dir / "state.json"; }
    void write(const std::string& text) { std::ofstream(file()) << text; }

    void expect_load_error(const std::string& message_part) {
        auto loaded = load_state(file());
        ASSERT_FALSE(loaded.has_value());
        EXPECT_NE(loaded.error().message().find(file().string()), std::string::npos)
            << loaded.error().message();
        EXPECT_NE(loaded.error().message().find(message_part), std::string::npos)
            << loaded.error().message();
    }
};

InstalledShim spin() {
    return InstalledShim{"spin-v2",
                         "spin",
                         "io.containerd.spin.v2",
                         "containerd-shim-spin-v2",
                         "containerd-shim-spin-v2",
                         "0.17.0",
                         std::string(64, 'c'),
                         "https://example.org/spin.tar.gz",
                         "usr/bin/containerd-shim-spin-v2",
                         "SystemdCgroup = true\n",
                         true,
                         true,
                         "wasmtime-spin",
                         "shims.d/spin.toml:1:1",
                         "derived from spec.binary containerd-shim-spin-v2"};
}

TEST_F(StoreStateFile, RoundTripKeepsEveryField) {
    StoreState state;
    state.generations.push_back(Generation{1, "2026-01-01T00:00:00Z", {spin()}});
    InstalledShim other = spin();
    other.name = "wasmtime";
    other.handler = "wasmtime";
    other.binary_path = "bin/containerd-shim-wasmtime-v1";
    state.generations.push_back(Generation{2, "2026-01-02T00:00:00Z", {spin(), other}});
    state.current = 2;
    ASSERT_TRUE(save_state(file(), state).has_value());

    auto loaded = load_state(file());
    ASSERT_TRUE(loaded.has_value()) << loaded.error().message();
    ASSERT_EQ(loaded->generations.size(), 2u);
    EXPECT_EQ(loaded->current, 2);
    const Generation* current = loaded->current_generation();
    ASSERT_NE(current, nullptr);
    EXPECT_EQ(current->created, "2026-01-02T00:00:00Z");
    const InstalledShim* shim = current->find("wasmtime");
    ASSERT_NE(shim, nullptr);
    EXPECT_EQ(shim->binary_path, "bin/containerd-shim-wasmtime-v1");
    const InstalledShim* first = loaded->find(1)->find("spin-v2");
    ASSERT_NE(first, nullptr);
    const InstalledShim expected = spin();
    EXPECT_EQ(first->handler, expected.handler);
    EXPECT_EQ(first->runtime_type, expected.runtime_type);
    EXPECT_EQ(first->binary, expected.binary);
    EXPECT_EQ(first->version, expected.version);
    EXPECT_EQ(first->digest, expected.digest);
    EXPECT_EQ(first->url, expected.url);
    EXPECT_EQ(first->options_toml, expected.options_toml);
    EXPECT_EQ(*first, expected); // the whole spec: adopt, allow_unverified, runtime_class too
    EXPECT_EQ(loaded->next_number(), 3);
}

// A state.json written before generations recorded the whole spec still loads, with defaults.
TEST_F(StoreStateFile, RecordsWithoutTheLaterFieldsLoadWithDefaults) {
    ASSERT_TRUE(util::write_file_atomic(
        file(), R"({"version": 1, "current": 1, "generations": [{"number": 1, "created": "x",
          "shims": [{"name": "a", "handler": "a", "runtime_type": "io.containerd.a.v2",
                     "binary": "containerd-shim-a-v2", "binary_path": "containerd-shim-a-v2",
                     "version": "", "digest": "d", "url": "u", "options_toml": ""}]}]})"));
    auto loaded = load_state(file());
    ASSERT_TRUE(loaded.has_value()) << loaded.error().message();
    const InstalledShim* shim = loaded->current_generation()->find("a");
    ASSERT_NE(shim, nullptr);
    EXPECT_FALSE(shim->adopt);
    EXPECT_FALSE(shim->allow_unverified);
    EXPECT_EQ(shim->runtime_class, "");
}

TEST_F(StoreStateFile, MissingFileIsAFreshNode) {
    auto loaded = load_state(file());
    ASSERT_TRUE(loaded.has_value());
    EXPECT_TRUE(loaded->generations.empty());
    EXPECT_FALSE(loaded->current.has_value());
    EXPECT_EQ(loaded->current_generation(), nullptr);
    EXPECT_EQ(loaded->next_number(), 1);
}

TEST_F(StoreStateFile, NullCurrentIsKept) {
    StoreState state;
    state.generations.push_back(Generation{4, "t", {}});
    ASSERT_TRUE(save_state(file(), state).has_value());
    auto loaded = load_state(file());
    ASSERT_TRUE(loaded.has_value());
    EXPECT_FALSE(loaded->current.has_value());
    EXPECT_EQ(loaded->next_number(), 5);
}

TEST_F(StoreStateFile, CorruptFileIsAnErrorNeverAReset) {
    const std::string truncated = R"({"version": 1, "current": 1, "generations": [)";
    write(truncated);
    expect_load_error("is not valid JSON");
    // The file is left as it was for the user to inspect.
    EXPECT_EQ(fs::file_size(file()), truncated.size());
}

TEST_F(StoreStateFile, UnknownVersionIsRefused) {
    write(R"({"version": 2, "current": null, "generations": []})");
    expect_load_error("\"version\": 2");
}

TEST_F(StoreStateFile, WrongTypesNameTheField) {
    write(R"({"version": 1, "current": null, "generations": [
        {"number": 1, "created": "t", "shims": [{"name": 5}]}]})");
    expect_load_error("shims[0] has \"name\" of type number");
    write(R"({"version": 1, "current": null, "generations": [{"number": 1, "created": "t"}]})");
    expect_load_error("generations[0] is missing \"shims\"");
}

TEST_F(StoreStateFile, CurrentMustNameAListedGeneration) {
    write(R"({"version": 1, "current": 7, "generations": []})");
    expect_load_error("current generation 7");
}

TEST_F(StoreStateFile, DuplicateGenerationNumbersAreRefused) {
    write(R"({"version": 1, "current": null, "generations": [
        {"number": 1, "created": "t", "shims": []}, {"number": 1, "created": "u", "shims": []}]})");
    expect_load_error("generation 1 twice");
}

} // namespace store_state
} // namespace
} // namespace shimkeeper::store
