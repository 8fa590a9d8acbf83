#!/usr/bin/env bash
# Scenario 3: upgrading a shim to a new artifact. What an operator checks: containerd restarted
# exactly once (one start of the unit, a new InvocationID, one restart in the journal), the bin/
# link and CRI's handler now lead to the new artifact, a new pod sandbox runs under the new binary,
# and a sandbox started before the upgrade keeps running under the old one (its inode stays).
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
node_up "$T/node"
node_shim_serve
node_shim_declare demo v1
expect_exit 0 ski apply
expect_output_contains "Committed generation 1"

binary=$(shim_binary_for demo)
link=$NODE_STORE_DIR/bin/$binary
v1=$NODE_STORE_DIR/store/sha256/$(node_shim_digest demo v1)/$binary
node_pause_image >/dev/null
old_pod=$(node_cri_client run-pod before-upgrade demo "$NODE_CGROUP_PARENT")
[[ "$(node_pod_shim_exe "$old_pod")" == "$v1" ]] || fail "the v1 sandbox does not run under $v1"

node_count_starts
identity=$(node_unit_identity)
node_shim_declare demo v2
v2=$NODE_STORE_DIR/store/sha256/$(node_shim_digest demo v2)/$binary
[[ "$v1" != "$v2" ]] || fail "test setup: v1 and v2 artifacts have the same digest"

expect_exit 0 ski apply
expect_output_contains "Committed generation 2"
expect_output_contains "containerd restarted and healthy"

(($(node_starts) == 1)) || fail "containerd.service started $(node_starts) times for one upgrade"
[[ "$(node_unit_identity)" != "$identity" ]] ||
    fail "containerd's InvocationID/ActiveEnterTimestamp did not change: it was not restarted"
[[ "$(node_journal_field restarts)" == 1 ]] ||
    fail "the journal records $(node_journal_field restarts) restarts, expected 1"
[[ "$(node_journal_field result)" == committed ]] ||
    fail "the journal's last transaction is $(node_journal_field result), not committed"

[[ "$(readlink "$link")" == "$v2" ]] || fail "bin link points at $(readlink "$link"), not $v2"
[[ "$(node_handler_binary demo)" == "$link" ]] ||
    fail "CRI reports handler demo -> '$(node_handler_binary demo)', expected $link"
[[ -x $v1 ]] || fail "the v1 artifact left the store while generation 1 is still kept"

new_pod=$(node_cri_client run-pod after-upgrade demo "$NODE_CGROUP_PARENT")
[[ "$(node_pod_shim_exe "$new_pod")" == "$v2" ]] ||
    fail "a sandbox started after the upgrade runs under $(node_pod_shim_exe "$new_pod"), not $v2"
[[ "$(node_pod_shim_exe "$old_pod")" == "$v1" ]] ||
    fail "the sandbox started before the upgrade no longer runs under $v1"
node_cri_client list-pods | grep -q "^$old_pod"$'\t'"before-upgrade"$'\t'"ready" ||
    fail "the sandbox started before the upgrade is not ready any more:" \
        "$(node_cri_client list-pods)"
for pod in "$old_pod" "$new_pod"; do
    node_cri_client stop-pod "$pod" >/dev/null
    node_cri_client remove-pod "$pod" >/dev/null
done

expect_exit 0 ski status
expect_output_contains "Current generation: 2"
echo "ok: upgraded with exactly one restart; new sandboxes run v2, the old one kept v1"
