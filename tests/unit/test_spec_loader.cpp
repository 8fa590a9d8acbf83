// The loader end to end: happy paths through parse_desired_state_text, and load_desired_state
// on real directories (one temp dir per test, kept when the test fails).
#include "shimkeeper/spec/desired_state.hpp"
#include "shimkeeper/util/fs.hpp"

#include <fstream>
#include <gtest/gtest.h>

namespace shimkeeper::spec {
namespace {
namespace spec_loader {

namespace fs = std::filesystem;

const std::string k_digest(64, 'a');

std::string shim_toml(const std::string& name, const std::string& handler) {
    return "[[shim]]\nname = \"" + name + "\"\nhandler = \"" + handler +
           "\"\nruntime_type = \"io.containerd." + handler +
           ".v2\"\n[shim.fetch]\nurl = \"https://example.org/" + name + ".tar.gz\"\nsha256 = \"" +
           k_digest + "\"\n";
}

TEST(SpecParse, DerivesDefaultsAndCopiesOptions) {
    const std::string text = "[[shim]]\n"
                             "name = \"spin-v2\"\n"
                             "handler = \"spin\"\n"
                             "runtime_type = \"io.containerd.spin.v2\"\n"
                             "version = \"0.17.0\"\n"
                             "options = { SystemdCgroup = true, Nested = { Depth = 2 } }\n"
                             "[shim.fetch]\n"
                             "url = \"https://example.org/spin.tar.gz\"\n"
                             "sha256 = \"" +
                             std::string(64, 'A') +
                             "\"\n"
                             "[shim.runtime_class]\n"
                             "name = \"wasmtime-spin-v2\"\n";
    auto state = parse_desired_state_text(text, "a.toml", "amd64", false);
    ASSERT_TRUE(state) << state.error().message();
    ASSERT_EQ(state->shims.size(), 1u);
    const ShimSpec& shim = state->shims[0];
    EXPECT_EQ(shim.name, "spin-v2");
    EXPECT_EQ(shim.handler, "spin");
    EXPECT_EQ(shim.binary, "containerd-shim-spin-v2");
    EXPECT_EQ(shim.version, "0.17.0");
    EXPECT_EQ(shim.options["SystemdCgroup"].value<bool>(), true);
    EXPECT_EQ(shim.options["Nested"]["Depth"].value<int64_t>(), 2);
    EXPECT_EQ(shim.fetch.url, "https://example.org/spin.tar.gz");
    EXPECT_EQ(shim.fetch.sha256, std::string(64, 'a')); // normalised to lowercase
    EXPECT_FALSE(shim.allow_unverified);
    EXPECT_FALSE(shim.adopt);
    ASSERT_TRUE(shim.runtime_class);
    EXPECT_EQ(shim.runtime_class->name, "wasmtime-spin-v2");
    EXPECT_EQ(shim.location.to_string(), "a.toml:1:1");
    EXPECT_EQ(state->files, std::vector<std::string>{"a.toml"});
}

TEST(SpecParse, AbsoluteRuntimeTypeDefaultsBinaryToItsBasename) {
    const std::string text = "[[shim]]\nname = \"wasm\"\nhandler = \"wasm\"\n"
                             "runtime_type = \"/var/lib/shimkeeper/bin/containerd-shim-wasm-v1\"\n"
                             "allow_unverified = true\nadopt = true\n"
                             "[shim.fetch]\nurl = \"file:///srv/wasm.tar.gz\"\n";
    auto state = parse_desired_state_text(text, "a.toml", "amd64", false);
    ASSERT_TRUE(state) << state.error().message();
    EXPECT_EQ(state->shims[0].binary, "containerd-shim-wasm-v1");
    EXPECT_TRUE(state->shims[0].allow_unverified);
    EXPECT_TRUE(state->shims[0].adopt);
    EXPECT_FALSE(state->shims[0].fetch.sha256);
}

TEST(SpecParse, ExplicitBinaryWins) {
    std::string text = shim_toml("kata", "kata");
    text.insert(text.find("[shim.fetch]"), "binary = \"containerd-shim-kata-qemu-v2\"\n");
    auto state = parse_desired_state_text(text, "a.toml", "amd64", false);
    ASSERT_TRUE(state) << state.error().message();
    EXPECT_EQ(state->shims[0].binary, "containerd-shim-kata-qemu-v2");
}

TEST(SpecParse, AgentFileHoldsSettingsAndShims) {
    const std::string text = "[containerd]\nconfig_path = \"/etc/containerd/config.toml\"\n"
                             "unit = \"containerd.service\"\nsocket = \"/run/c.sock\"\n"
                             "binary = \"/usr/bin/containerd\"\nflavor = \"k3s\"\n"
                             "[systemd]\nbus = \"user\"\n"
                             "[store]\ndir = \"/srv/store\"\nkeep = 4\n"
                             "[health]\ntimeout = 2.5\n"
                             "[fetch]\nconnect_timeout = 3\nstall_timeout = 0.5\n"
                             "total_timeout = 60\nmax_size = 1024\nretries = 0\n"
                             "ca_bundle = \"/etc/ssl/ca.pem\"\n" +
                             shim_toml("spin", "spin");
    auto state = parse_desired_state_text(text, "shimkeeper.toml", "amd64", true);
    ASSERT_TRUE(state) << state.error().message();
    const AgentSettings& s = state->settings;
    EXPECT_EQ(s.containerd.config_path, "/etc/containerd/config.toml");
    EXPECT_EQ(s.containerd.unit, "containerd.service");
    EXPECT_EQ(s.containerd.socket, "/run/c.sock");
    EXPECT_EQ(s.containerd.binary, "/usr/bin/containerd");
    EXPECT_EQ(s.containerd.flavor, "k3s");
    EXPECT_EQ(s.systemd.bus, BusKind::user);
    EXPECT_EQ(s.store.dir, "/srv/store");
    EXPECT_EQ(s.store.keep_generations, 4);
    EXPECT_EQ(s.health.timeout, std::chrono::milliseconds(2500));
    EXPECT_EQ(s.fetch.connect_timeout, std::chrono::milliseconds(3000));
    EXPECT_EQ(s.fetch.stall_timeout, std::chrono::milliseconds(500));
    EXPECT_EQ(s.fetch.total_timeout, std::chrono::milliseconds(60000));
    EXPECT_EQ(s.fetch.max_size, 1024u);
    EXPECT_EQ(s.fetch.retries, 0);
    EXPECT_EQ(s.fetch.ca_bundle, "/etc/ssl/ca.pem");
    ASSERT_EQ(state->shims.size(), 1u);
    EXPECT_EQ(state->shims[0].name, "spin");
}

TEST(SpecParse, EmptyAgentFileKeepsDefaults) {
    auto state = parse_desired_state_text("", "shimkeeper.toml", "amd64", true);
    ASSERT_TRUE(state) << state.error().message();
    EXPECT_TRUE(state->shims.empty());
    EXPECT_EQ(state->settings.store.dir, "/var/lib/shimkeeper");
    EXPECT_EQ(state->settings.store.keep_generations, 2);
    EXPECT_EQ(state->settings.systemd.bus, BusKind::system);
    EXPECT_FALSE(state->settings.containerd.flavor);
}

class SpecLoad : public testing::Test {
protected:
    void SetUp() override {
        auto dir = util::make_temp_dir(testing::TempDir(), "spec-load-");
        ASSERT_TRUE(dir) << dir.error().message();
        m_dir = *dir;
        m_request.agent_config = m_dir / "shimkeeper.toml";
        m_request.shims_dir = m_dir / "shims.d";
        m_request.arch = "amd64";
    }
    void TearDown() override {
        if (!HasFailure()) {
            ASSERT_TRUE(util::remove_all(m_dir));
        }
    }
    void write(const fs::path& relative, const std::string& text) {
        fs::create_directories((m_dir / relative).parent_path());
        std::ofstream(m_dir / relative) << text;
    }
    std::string path(const std::string& relative) const { return (m_dir / relative).string(); }

    fs::path m_dir;
    LoadRequest m_request;
};

TEST_F(SpecLoad, NothingOnDiskIsAnEmptyDesiredState) {
    auto state = load_desired_state(m_request);
    ASSERT_TRUE(state) << state.error().message();
    EXPECT_TRUE(state->shims.empty());
    EXPECT_TRUE(state->files.empty());
}

TEST_F(SpecLoad, MissingAgentConfigGivenWithDashCIsAnError) {
    m_request.agent_config_required = true;
    auto state = load_desired_state(m_request);
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().code(), util::ErrorCode::invalid_input);
    EXPECT_EQ(state.error().message(),
              "agent config " + path("shimkeeper.toml") +
                  " does not exist (it was given with -c/--config); create it, or leave out -c "
                  "to use the default location");
}

TEST_F(SpecLoad, UnreadableAgentConfigIsAnIoErrorEvenWhenOptional) {
    fs::create_directories(m_dir / "shimkeeper.toml");
    auto state = load_desired_state(m_request);
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().code(), util::ErrorCode::io);
    EXPECT_TRUE(state.error().message().starts_with("cannot read " + path("shimkeeper.toml")))
        << state.error().message();
}

TEST_F(SpecLoad, ReadsAgentFileThenDropInsInLexicalOrder) {
    write("shimkeeper.toml", "[store]\nkeep = 3\n" + shim_toml("agent", "agent"));
    write("shims.d/20-b.toml", shim_toml("bbb", "bbb"));
    write("shims.d/10-c.toml", shim_toml("ccc", "ccc"));
    write("shims.d/30-a.toml", shim_toml("aaa", "aaa"));
    write("shims.d/40-x.toml.disabled", "not toml at all [");
    write("shims.d/README", "not toml either [");
    write("shims.d/.50-hidden.toml", "broken [");
    auto state = load_desired_state(m_request);
    ASSERT_TRUE(state) << state.error().message();
    std::vector<std::string> names;
    for (const ShimSpec& shim : state->shims) {
        names.push_back(shim.name);
    }
    EXPECT_EQ(names, (std::vector<std::string>{"agent", "ccc", "bbb", "aaa"}));
    EXPECT_EQ(state->files,
              (std::vector<std::string>{path("shimkeeper.toml"), path("shims.d/10-c.toml"),
                                        path("shims.d/20-b.toml"), path("shims.d/30-a.toml")}));
    EXPECT_EQ(state->settings.store.keep_generations, 3);
    EXPECT_EQ(state->shims[1].location.to_string(), path("shims.d/10-c.toml") + ":1:1");
}

TEST_F(SpecLoad, DropInsWithoutAgentFile) {
    write("shims.d/spin.toml", shim_toml("spin", "spin"));
    auto state = load_desired_state(m_request);
    ASSERT_TRUE(state) << state.error().message();
    ASSERT_EQ(state->shims.size(), 1u);
    EXPECT_EQ(state->files, std::vector<std::string>{path("shims.d/spin.toml")});
}

TEST_F(SpecLoad, DuplicateNameAcrossFilesNamesBothPlaces) {
    write("shimkeeper.toml", "\n" + shim_toml("spin", "spin"));
    write("shims.d/a.toml", shim_toml("spin", "other"));
    auto state = load_desired_state(m_request);
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().message(), path("shims.d/a.toml") +
                                           ":1:1: shim name 'spin' is already used by the "
                                           "shim at " +
                                           path("shimkeeper.toml") +
                                           ":2:1; every shim needs its own name");
}

TEST_F(SpecLoad, DuplicateHandlerAcrossDropInsNamesBothPlaces) {
    write("shims.d/a.toml", shim_toml("one", "spin"));
    write("shims.d/b.toml", "\n\n" + shim_toml("two", "spin"));
    auto state = load_desired_state(m_request);
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().message(), path("shims.d/b.toml") +
                                           ":3:1: handler 'spin' of shim 'two' is already used by "
                                           "shim 'one' at " +
                                           path("shims.d/a.toml") +
                                           ":1:1; containerd holds one runtime per handler");
}

TEST_F(SpecLoad, AgentTablesInADropInAreRefused) {
    write("shims.d/a.toml", shim_toml("one", "one") + "[store]\nkeep = 3\n");
    auto state = load_desired_state(m_request);
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().message(),
              path("shims.d/a.toml") + ":8:1: [store] is an agent setting and belongs in "
                                       "shimkeeper.toml; files in shims.d may only hold [[shim]] "
                                       "entries");
}

TEST_F(SpecLoad, SyntaxErrorNamesFileLineAndColumn) {
    write("shims.d/a.toml", "[[shim]]\nname = = \"x\"\n");
    auto state = load_desired_state(m_request);
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().code(), util::ErrorCode::invalid_input);
    EXPECT_TRUE(
        state.error().message().starts_with(path("shims.d/a.toml") + ":2:8: invalid TOML: "))
        << state.error().message();
}

TEST_F(SpecLoad, ShimsDirThatIsAFileIsAnError) {
    write("shims.d", "");
    auto state = load_desired_state(m_request);
    ASSERT_FALSE(state);
    EXPECT_EQ(state.error().message(),
              path("shims.d") + " is not a directory; shims.d must be a directory of *.toml "
                                "drop-ins");
}

TEST_F(SpecLoad, DirectoryNamedLikeADropInIsAnError) {
    fs::create_directories(m_dir / "shims.d" / "x.toml");
    auto state = load_desired_state(m_request);
    ASSERT_FALSE(state);
    EXPECT_TRUE(
        state.error().message().starts_with(path("shims.d/x.toml") + " is not a regular file"))
        << state.error().message();
}

} // namespace spec_loader
} // namespace
} // namespace shimkeeper::spec
