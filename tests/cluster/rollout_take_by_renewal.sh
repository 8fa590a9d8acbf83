#!/usr/bin/env bash
# A grant that a node takes with its `installing` write (slot_keeper.hpp) does not go stale while a
# long transaction gets there. One agent on a sandbox root with stage_ahead = false, so that its
# download of about 18 s runs inside its slot, longer than the slot's lease (15 s); a rolling Shim
# with maxUpdate 1. The renewal thread's first round (5 s in) takes the grant, so:
#   - the API server's record shows node-1's take (its held_demo entry naming the grant) in a
#     write before its `installing`, the committing mark with `installing`;
#   - the coordinators never revoke the slot, and node-1 never stops before its change;
#   - node-1 installs demo in its one slot, within the bound.
# Without the renewal's take the coordinator revokes the untaken grant after its lease and the
# node stops before its first change (seen failing that way).
# seconds-about: 45
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
rollout_testbed
rate=$(($(stat -c %s "$T/www/demo.tar.gz") / 18)) # eighteen seconds a download
ROLLOUT_STAGE_AHEAD=false rollout_agents 1 1 rollout=yes
grep -qx "stage_ahead = false" "$T/roots/node-1/etc/shimkeeper/shimkeeper.toml" ||
    fail "node-1's config does not turn staging ahead off"
kube_wait_for 60 coordinator_elected || fail "no coordinator was elected"
rollout_record
kube_shim_yaml demo "$SERVER_URL/slow/$rate/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")" \
    "  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: 1}}" | kube_admin apply -f - >/dev/null

log=$T/roots/node-1.log
finished() { rollout_finished_on demo 1 node-1 && [[ -z "$(rollout_slot_holders)" ]]; }
kube_wait_for 120 finished ||
    fail "node-1 did not finish demo: $(rollout_annotation node-1 demo); $(grep 'rollout:' "$log" | tail -n 8)"
grep -q "fetch demo: downloading" "$log" || fail "node-1 did not download in its slot: $(cat "$log")"
if grep -q "rollout: not changing Shim/demo" "$log"; then
    fail "node-1 stopped before its change: $(grep 'not changing' "$log")"
fi
took=$(grep -c "rollout: took slot demo-slot-" "$log" || true)
((took == 1)) || fail "node-1 took $took slots, not one: $(grep 'rollout:' "$log")"
if grep -h "revoked rollout slot Lease demo-slot-" "$T"/coord-*.log; then
    fail "a coordinator revoked node-1's slot while its download ran"
fi
report=$(rollout_check demo 1 "" --nodes node-1) || fail "the rollout broke its bound: $report"
echo "$report"
# The take in a write before `installing`: the renewal's (committing_with_report.py fails such a
# record, as it should: its words are what is checked here).
writes=$(python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/committing_with_report.py" "$T/nodes.events" demo 1 || true)
echo "$writes"
grep -qx 'committing marks of demo generation 1: 1, in the same write as installing: 1' <<<"$writes" ||
    fail "node-1's committing mark did not go with its installing: $writes"
grep -q '^taken before installing (1): node-1(' <<<"$writes" ||
    fail "node-1's take is not in the record as a write before its installing: $writes"
pass "node-1 downloaded 18 s in its slot, the renewal took the grant, no revoke, demo installed"
