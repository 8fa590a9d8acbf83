#!/usr/bin/env bash
# Scenario 4: removing a shim by deleting its drop-in. What an operator checks: its block is gone
# from containerd's config, CRI Status no longer lists the handler (and RunPodSandbox refuses it),
# the other shim and runc are untouched, containerd restarted exactly once, the bin/ link is gone.
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
node_up "$T/node"
node_shim_serve

node_shim_declare keep v1
expect_exit 0 ski apply
expect_output_contains "Committed generation 1"
config_with_keep_only=$(node_config_digest)

node_shim_declare demo v1
expect_exit 0 ski apply
expect_output_contains "Committed generation 2"
[[ "$(node_handler_presence demo)" == present ]] ||
    fail "test setup: demo is $(node_handler_presence demo) after installing it"

node_count_starts
identity=$(node_unit_identity)
rm "$NODE_SHIMS_D/10-demo.toml"
expect_exit 0 ski apply
expect_output_contains "Committed generation 3"
expect_output_contains "containerd restarted and healthy"

(($(node_starts) == 1)) || fail "containerd.service started $(node_starts) times for one removal"
[[ "$(node_unit_identity)" != "$identity" ]] || fail "containerd was not restarted by the removal"
[[ "$(node_journal_field restarts)" == 1 ]] ||
    fail "the journal records $(node_journal_field restarts) restarts, expected 1"

! node_config_mentions 'runtimes.demo]' || fail "a demo table is still in $NODE_CONFIG_DIR"
! node_config_has_handler demo || fail "containerd still reads a demo handler from its config"
node_cri_lacks_handler demo || fail "CRI Status still lists handler demo (or does not answer)"
demo_link=$NODE_STORE_DIR/bin/$(shim_binary_for demo)
[[ ! -e $demo_link && ! -L $demo_link ]] || fail "$demo_link is still there"
[[ "$(node_config_digest)" == "$config_with_keep_only" ]] ||
    fail "the config is not back to what it was before demo was installed"

[[ "$(node_handler_presence keep)" == present ]] ||
    fail "the other shim 'keep' is $(node_handler_presence keep) after removing demo"
node_cri_has_handler runc || fail "the default runc handler is gone from CRI Status"

# The kubelet's view: a pod on the removed handler is refused, one on the kept handler runs.
node_pause_image >/dev/null
if node_cri_client run-pod refused demo "$NODE_CGROUP_PARENT" >"$T/refused.out" 2>&1; then
    fail "RunPodSandbox on the removed handler demo succeeded: $(cat "$T/refused.out")"
fi
grep -q '"demo"' "$T/refused.out" ||
    fail "RunPodSandbox on handler demo failed, but not because of the handler:" \
        "$(cat "$T/refused.out")"
pod=$(node_cri_client run-pod kept keep "$NODE_CGROUP_PARENT")
keep_binary=$(readlink "$NODE_STORE_DIR/bin/$(shim_binary_for keep)")
[[ "$(node_pod_shim_exe "$pod")" == "$keep_binary" ]] ||
    fail "the sandbox on handler keep does not run the installed keep shim"
node_cri_client stop-pod "$pod" >/dev/null
node_cri_client remove-pod "$pod" >/dev/null

expect_exit 0 ski status
expect_output_contains "Current generation: 3"
echo "ok: removed demo with one restart; config, CRI and bin/ no longer have it, keep still runs"
