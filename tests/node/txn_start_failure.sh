#!/usr/bin/env bash
# Scenario 5: containerd fails to start after the change. A test drop-in on containerd.service
# makes its start fail whenever the config holds a runtimes.broken table; declaring a shim with
# handler "broken" then makes the restart fail. What an operator checks: apply exits 1 and says it
# rolled back; containerd is active again with the handlers it had (the shim installed before is
# still registered and runs pods); the config is byte-identical to before, bin/ is as before, the
# current generation did not move; `shimkeeper status` names the rolled-back transaction and why.
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
node_up "$T/node"
node_shim_serve
node_shim_declare good v1
expect_exit 0 ski apply
expect_output_contains "Committed generation 1"

node_unit_dropin 60-refuse-broken "[Service]
ExecStartPre=/bin/sh -c '! grep -rq \"runtimes\\.broken\" $NODE_CONFIG_DIR'"
node_count_starts
node_snapshot_before

node_shim_declare broken v1
expect_exit 1 ski apply
expect_output_contains "Rolled back"
expect_output_contains "back at generation 1"

node_unit_is_active || fail "containerd.service is $(node_unit_prop ActiveState) after the rollback"
node_wait_healthy || fail "containerd is not healthy after the rollback"
[[ "$(node_handler_presence good)" == present ]] ||
    fail "the shim installed before is $(node_handler_presence good) after the rollback"
[[ "$(node_handler_presence broken)" == absent ]] ||
    fail "the broken shim is $(node_handler_presence broken) after the rollback"
node_expect_as_before "after the rollback"

# One start for the change (it failed) and one for the rollback: no more.
(($(node_starts) == 2)) ||
    fail "containerd.service started $(node_starts) times; expected 2 (change, rollback)"
[[ "$(node_journal_field result)" == rolled-back ]] ||
    fail "the journal's last transaction is $(node_journal_field result), not rolled-back"
reason=$(node_journal_field reason)
[[ $reason == *containerd.service* ]] || fail "the recorded reason does not name the unit: $reason"

# The operator's view.
expect_exit 0 ski status
expect_output_contains "Current generation: 1"
grep -qiE 'rolled[ -]back' "$OUT" ||
    fail "status does not say the last transaction rolled back: $(cat "$OUT")"
expect_output_contains "$reason"

node_pause_image >/dev/null
pod=$(node_cri_client run-pod after-rollback good "$NODE_CGROUP_PARENT")
good_binary=$(readlink "$NODE_STORE_DIR/bin/$(shim_binary_for good)")
[[ "$(node_pod_shim_exe "$pod")" == "$good_binary" ]] ||
    fail "a sandbox on handler good does not run the installed shim after the rollback"
node_cri_client stop-pod "$pod" >/dev/null
node_cri_client remove-pod "$pod" >/dev/null
echo "ok: a change containerd cannot start with was rolled back; the node runs as before"
