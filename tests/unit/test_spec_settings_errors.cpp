// One test per refusal of an agent table in shimkeeper.toml ([containerd], [systemd], [store],
// [health], [fetch]); each asserts the message names file:line:column and the problem.
#include "shimkeeper/spec/desired_state.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::spec {
namespace {
namespace spec_settings_errors {

std::string error_of(const std::string& text) {
    auto state = parse_desired_state_text(text, "shimkeeper.toml", "amd64", true);
    if (state) {
        ADD_FAILURE() << "accepted:\n" << text;
        return {};
    }
    EXPECT_EQ(state.error().code(), util::ErrorCode::invalid_input);
    return state.error().message();
}

TEST(SpecSettingsErrors, UnknownContainerdKeySuggestsClosest) {
    EXPECT_EQ(error_of("[containerd]\nsockets = \"/run/c.sock\"\n"),
              "shimkeeper.toml:2:1: unknown key 'sockets' in [containerd]; did you mean 'socket'?");
}

TEST(SpecSettingsErrors, UnknownTopLevelTableSuggestsClosest) {
    EXPECT_EQ(error_of("[helth]\ntimeout = 3\n"),
              "shimkeeper.toml:1:2: unknown key 'helth' in the top level; did you mean 'health'?");
}

TEST(SpecSettingsErrors, AgentTableThatIsNotATable) {
    EXPECT_EQ(error_of("containerd = \"/usr/bin/containerd\"\n"),
              "shimkeeper.toml:1:14: 'containerd' must be a table: write [containerd]");
}

TEST(SpecSettingsErrors, UnknownFlavor) {
    EXPECT_EQ(error_of("[containerd]\nflavor = \"docker\"\n"),
              "shimkeeper.toml:2:10: 'flavor' in [containerd] is \"docker\"; it must be one of "
              "containerd, k3s, rke2, microk8s, k0s (or left out to autodetect)");
}

TEST(SpecSettingsErrors, EmptyUnit) {
    EXPECT_EQ(error_of("[containerd]\nunit = \"\"\n"),
              "shimkeeper.toml:2:8: 'unit' in [containerd] is empty; remove the key to "
              "autodetect it");
}

TEST(SpecSettingsErrors, RelativeConfigPath) {
    EXPECT_EQ(error_of("[containerd]\nconfig_path = \"etc/containerd/config.toml\"\n"),
              "shimkeeper.toml:2:15: 'config_path' in [containerd] must be an absolute path "
              "(starting with '/') (got \"etc/containerd/config.toml\")");
}

TEST(SpecSettingsErrors, SocketOfWrongType) {
    EXPECT_EQ(error_of("[containerd]\nsocket = 5\n"),
              "shimkeeper.toml:2:10: 'socket' in [containerd] must be a string, not an integer");
}

TEST(SpecSettingsErrors, UnknownBus) {
    EXPECT_EQ(error_of("[systemd]\nbus = \"session\"\n"),
              "shimkeeper.toml:2:7: 'bus' in [systemd] is \"session\"; it must be \"system\" or "
              "\"user\"");
}

TEST(SpecSettingsErrors, RelativeStoreDir) {
    EXPECT_EQ(error_of("[store]\ndir = \"var/lib/shimkeeper\"\n"),
              "shimkeeper.toml:2:7: 'dir' in [store] must be an absolute path (starting with '/') "
              "(got \"var/lib/shimkeeper\")");
}

TEST(SpecSettingsErrors, KeepOfWrongType) {
    EXPECT_EQ(error_of("[store]\nkeep = \"3\"\n"),
              "shimkeeper.toml:2:8: 'keep' in [store] must be an integer, not a string");
}

TEST(SpecSettingsErrors, KeepBelowOne) {
    EXPECT_EQ(error_of("[store]\nkeep = 0\n"),
              "shimkeeper.toml:2:8: 'keep' in [store] must be between 1 and 1000 (the number of "
              "generations kept for rollback), got 0");
    EXPECT_NE(error_of("[store]\nkeep = 9999999999\n").find("got 9999999999"), std::string::npos);
}

TEST(SpecSettingsErrors, HealthTimeoutNotPositive) {
    EXPECT_EQ(error_of("[health]\ntimeout = 0\n"),
              "shimkeeper.toml:2:11: 'timeout' in [health] must be a number of seconds greater "
              "than 0");
    EXPECT_EQ(error_of("[health]\ntimeout = -1.5\n"),
              "shimkeeper.toml:2:11: 'timeout' in [health] must be a number of seconds greater "
              "than 0");
}

TEST(SpecSettingsErrors, HealthTimeoutAsString) {
    EXPECT_EQ(error_of("[health]\ntimeout = \"30s\"\n"),
              "shimkeeper.toml:2:11: 'timeout' in [health] must be a number of seconds (e.g. 30 "
              "or 2.5), not a string");
}

TEST(SpecSettingsErrors, HealthTimeoutNotFinite) {
    EXPECT_NE(error_of("[health]\ntimeout = inf\n").find("greater than 0"), std::string::npos);
    EXPECT_NE(error_of("[health]\ntimeout = nan\n").find("greater than 0"), std::string::npos);
}

TEST(SpecSettingsErrors, FetchTimeoutsNotPositive) {
    for (std::string key : {"connect_timeout", "stall_timeout", "total_timeout"}) {
        EXPECT_EQ(error_of("[fetch]\n" + key + " = 0\n"),
                  "shimkeeper.toml:2:" + std::to_string(key.size() + 4) + ": '" + key +
                      "' in [fetch] must be a number of seconds greater than 0");
    }
}

TEST(SpecSettingsErrors, RetriesOutOfRange) {
    EXPECT_EQ(error_of("[fetch]\nretries = 11\n"),
              "shimkeeper.toml:2:11: 'retries' in [fetch] must be between 0 and 10, got 11");
    EXPECT_EQ(error_of("[fetch]\nretries = -1\n"),
              "shimkeeper.toml:2:11: 'retries' in [fetch] must be between 0 and 10, got -1");
}

TEST(SpecSettingsErrors, MaxSizeNotPositive) {
    EXPECT_EQ(error_of("[fetch]\nmax_size = 0\n"),
              "shimkeeper.toml:2:12: 'max_size' in [fetch] must be a number of bytes greater "
              "than 0, got 0");
}

TEST(SpecSettingsErrors, MaxSizeAsFloat) {
    EXPECT_EQ(error_of("[fetch]\nmax_size = 1.5\n"),
              "shimkeeper.toml:2:12: 'max_size' in [fetch] must be an integer, not a "
              "floating-point number");
}

TEST(SpecSettingsErrors, RelativeCaBundle) {
    EXPECT_EQ(error_of("[fetch]\nca_bundle = \"ca.pem\"\n"),
              "shimkeeper.toml:2:13: 'ca_bundle' in [fetch] must be an absolute path (starting "
              "with '/') (got \"ca.pem\")");
}

TEST(SpecSettingsErrors, ShimSourceInAgentFetchPointsAtShimFetch) {
    EXPECT_EQ(error_of("[fetch]\nretries = 1\nurl = \"https://example.org/x.tar.gz\"\n"),
              "shimkeeper.toml:3:7: unknown key 'url' in [fetch], which holds download settings; "
              "a shim's source goes in [shim.fetch] after its [[shim]]");
}

TEST(SpecSettingsErrors, UnknownFetchSettingSuggestsClosest) {
    EXPECT_EQ(error_of("[fetch]\nretry = 2\n"),
              "shimkeeper.toml:2:1: unknown key 'retry' in [fetch]; did you mean 'retries'?");
}

// [kube]: cluster mode's settings.
TEST(SpecSettingsErrors, TheRemovedSecondNodeCredentialIsRefusedSayingWhatToDo) {
    const std::string message = error_of("[kube]\nkubeconfig = \"/etc/shimkeeper/kubeconfig\"\n"
                                         "node_kubeconfig = \"/var/lib/kubelet/kubeconfig\"\n");
    EXPECT_NE(message.find("shimkeeper.toml:3:"), std::string::npos) << message;
    EXPECT_NE(message.find("no longer read: the agent uses one node credential"), std::string::npos)
        << message;
}

TEST(SpecSettingsErrors, KubeconfigMustBeAbsolute) {
    const std::string message = error_of("[kube]\nkubeconfig = \"kubeconfig\"\n");
    EXPECT_NE(message.find("shimkeeper.toml:2:"), std::string::npos) << message;
    EXPECT_NE(message.find("kubeconfig"), std::string::npos) << message;
}

// [metrics]: node_exporter's textfile directory.
TEST(SpecSettingsErrors, MetricsTextfileDirMustBeAbsolute) {
    const std::string message = error_of("[metrics]\ntextfile_dir = \"node-exporter\"\n");
    EXPECT_EQ(message.rfind("shimkeeper.toml:2:", 0), 0u) << message;
    EXPECT_NE(message.find("'textfile_dir' in [metrics]"), std::string::npos) << message;
}

TEST(SpecSettingsErrors, MetricsUnknownKeySuggestsClosest) {
    EXPECT_EQ(error_of("[metrics]\ntextfile_directory = \"/x\"\n"),
              "shimkeeper.toml:2:1: unknown key 'textfile_directory' in [metrics]; did you mean "
              "'textfile_dir'?");
}

TEST(SpecSettingsErrors, MetricsEnabledIsABoolean) {
    const std::string message = error_of("[metrics]\nenabled = \"no\"\n");
    EXPECT_NE(message.find("shimkeeper.toml:2:"), std::string::npos) << message;
    EXPECT_NE(message.find("enabled"), std::string::npos) << message;
}

TEST(SpecSettings, MetricsDefaultsToDebiansTextfileDirectory) {
    auto state = parse_desired_state_text("", "shimkeeper.toml", "amd64", true);
    ASSERT_TRUE(state);
    EXPECT_TRUE(state->settings.metrics.enabled);
    EXPECT_EQ(state->settings.metrics.textfile_dir, "/var/lib/prometheus/node-exporter");
    state = parse_desired_state_text("[metrics]\nenabled = false\ntextfile_dir = \"/srv/prom\"\n",
                                     "shimkeeper.toml", "amd64", true);
    ASSERT_TRUE(state) << state.error().message();
    EXPECT_FALSE(state->settings.metrics.enabled);
    EXPECT_EQ(state->settings.metrics.textfile_dir, "/srv/prom");
}

TEST(SpecSettingsErrors, MetricsInADropInBelongsInShimkeeperToml) {
    auto state =
        parse_desired_state_text("[metrics]\nenabled = false\n", "shims.d/a.toml", "amd64", false);
    ASSERT_FALSE(state);
    EXPECT_NE(state.error().message().find("[metrics] is an agent setting"), std::string::npos)
        << state.error().message();
}

TEST(SpecSettingsErrors, KubeNodeNameFollowsTheNodeNameGrammar) {
    const std::string message =
        error_of("[kube]\nkubeconfig = \"/etc/shimkeeper/kubeconfig\"\nnode_name = \"Node_A\"\n");
    EXPECT_NE(message.find("'node_name' in [kube] is \"Node_A\""), std::string::npos) << message;
}

TEST(SpecSettingsErrors, KubeUnknownKeySuggestsClosest) {
    const std::string message = error_of("[kube]\nkubeconfig = \"/etc/k\"\nnode_nme = \"a\"\n");
    EXPECT_NE(message.find("did you mean 'node_name'?"), std::string::npos) << message;
}

TEST(SpecSettingsErrors, KubeIsNotAllowedInADropIn) {
    auto state =
        parse_desired_state_text("[kube]\nkubeconfig = \"/etc/k\"\n", "10-x.toml", "amd64", false);
    ASSERT_FALSE(state);
    EXPECT_NE(state.error().message().find("[kube] is an agent setting"), std::string::npos);
}

TEST(SpecSettings, KubeTableIsRead) {
    auto state = parse_desired_state_text(
        "[kube]\nkubeconfig = \"/etc/shimkeeper/kubeconfig\"\nnode_name = \"node-a.zone\"\n",
        "shimkeeper.toml", "amd64", true);
    ASSERT_TRUE(state) << state.error().message();
    ASSERT_TRUE(state->settings.kube);
    EXPECT_EQ(state->settings.kube->kubeconfig, "/etc/shimkeeper/kubeconfig");
    EXPECT_EQ(state->settings.kube->node_name, "node-a.zone");
    EXPECT_EQ(state->settings.kube->namespace_name, "shimkeeper-system");
    EXPECT_TRUE(state->settings.kube->stage_ahead) << "staging ahead of a slot is the default";
}

TEST(SpecSettings, KubeStageAheadCanBeTurnedOffAndIsABoolean) {
    auto state = parse_desired_state_text("[kube]\nkubeconfig = \"/etc/k\"\nstage_ahead = false\n",
                                          "shimkeeper.toml", "amd64", true);
    ASSERT_TRUE(state) << state.error().message();
    EXPECT_FALSE(state->settings.kube->stage_ahead);
    const std::string message = error_of("[kube]\nkubeconfig = \"/etc/k\"\nstage_ahead = \"no\"\n");
    EXPECT_NE(message.find("stage_ahead"), std::string::npos) << message;
}

TEST(SpecSettingsErrors, RestartSpacingIsBounded) {
    EXPECT_EQ(error_of("[systemd]\nrestart_spacing = 700\n"),
              "shimkeeper.toml:2:19: 'restart_spacing' in [systemd] must be at most 600 seconds "
              "(the least time between two restarts of containerd by shimkeeper)");
    auto state = parse_desired_state_text("[systemd]\nrestart_spacing = 0.5\n", "shimkeeper.toml",
                                          "amd64", true);
    ASSERT_TRUE(state) << state.error().message();
    EXPECT_EQ(state->settings.systemd.restart_spacing, std::chrono::milliseconds(500));
    auto defaults = parse_desired_state_text("", "shimkeeper.toml", "amd64", true);
    ASSERT_TRUE(defaults);
    EXPECT_EQ(defaults->settings.systemd.restart_spacing, std::chrono::milliseconds(2'000));
}

TEST(SpecSettingsErrors, OciSourceRefusals) {
    const std::string digest = "@sha256:" + std::string(64, 'a');
    auto shim_error = [](const std::string& fetch) {
        auto state =
            parse_desired_state_text("[[shim]]\nname = \"d\"\nhandler = \"d\"\nruntime_type = "
                                     "\"io.containerd.d.v2\"\n[shim.fetch]\n" +
                                         fetch,
                                     "shims.d/d.toml", "amd64", false);
        EXPECT_FALSE(state) << fetch;
        return state ? std::string() : state.error().message();
    };
    EXPECT_NE(shim_error("oci = \"r.example.org/d:1\"\n").find("has no @sha256: digest"),
              std::string::npos);
    EXPECT_NE(shim_error("oci = \"r.example.org/d" + digest + "\"\nsha256 = \"" +
                         std::string(64, 'b') + "\"\n")
                  .find("'sha256' in [shim.fetch] does not go with oci"),
              std::string::npos);
    EXPECT_NE(shim_error("url = \"https://e.org/x\"\noci = \"r.example.org/d" + digest + "\"\n")
                  .find("has both url and oci"),
              std::string::npos);
    EXPECT_NE(shim_error("url = \"https://e.org/x\"\npath = \"x\"\nsha256 = \"" +
                         std::string(64, 'b') + "\"\n")
                  .find("goes with oci only"),
              std::string::npos);
    EXPECT_NE(shim_error("oci = \"r.example.org/d" + digest + "\"\npath = \"../x\"\n")
                  .find("must name a file inside the image"),
              std::string::npos);
}

} // namespace spec_settings_errors
} // namespace
} // namespace shimkeeper::spec
