#!/usr/bin/env bash
# Scenario 6: containerd starts and is healthy, but without the new handler. A test drop-in makes
# containerd.service run a frozen copy of the config (taken before the change), so the restart
# succeeds while CRI never learns about handler "ghost". What an operator checks: apply exits 1 and
# rolled back because the handler was missing; containerd is active with the handlers it had; the
# config and bin/ are as before; once the cause is gone, the same apply converges.
# seconds-about: 15
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
node_up "$T/node"
node_shim_serve
node_health_timeout 8 # the check that must fail waits this long for the handler
node_shim_declare good v1
expect_exit 0 ski apply
expect_output_contains "Committed generation 1"

frozen=$(node_freeze_config "$NODE_DIR/frozen-config")
node_unit_dropin 60-frozen-config "[Service]
ExecStart=
ExecStart=$NODE_CONTAINERD --config $frozen"
node_count_starts
node_snapshot_before

node_shim_declare ghost v1
expect_exit 1 ski apply
expect_output_contains "Rolled back"
expect_output_contains "ghost"
expect_output_contains "back at generation 1"

reason=$(node_journal_field reason)
[[ "$(node_journal_field result)" == rolled-back ]] ||
    fail "the journal's last transaction is $(node_journal_field result), not rolled-back"
[[ $reason == *ghost* ]] || fail "the recorded reason does not name the missing handler: $reason"
(($(node_starts) == 2)) ||
    fail "containerd.service started $(node_starts) times; expected 2 (change, rollback)"

node_unit_is_active || fail "containerd.service is $(node_unit_prop ActiveState) after the rollback"
node_wait_healthy || fail "containerd is not healthy after the rollback"
[[ "$(node_handler_presence good)" == present ]] ||
    fail "the shim installed before is $(node_handler_presence good) after the rollback"
[[ "$(node_handler_presence ghost)" == absent ]] ||
    fail "the ghost shim is $(node_handler_presence ghost) after the rollback"
node_expect_as_before "after the rollback"
expect_exit 0 ski status
expect_output_contains "Current generation: 1"

# The cause goes away: the same desired state now converges.
node_unit_dropin 60-frozen-config
expect_exit 0 ski apply
expect_output_contains "Committed generation 2"
[[ "$(node_handler_presence ghost)" == present ]] ||
    fail "ghost is $(node_handler_presence ghost) after the apply that should converge"
[[ "$(node_handler_presence good)" == present ]] || fail "good is $(node_handler_presence good)"
echo "ok: a restart that lost the new handler was rolled back; the fixed node then converged"
