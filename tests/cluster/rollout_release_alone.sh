#!/usr/bin/env bash
# A slot whose committing mark and release were to go with the Node reports is marked and released
# all the same when those reports fail. Two agents (sandbox roots), a rolling Shim with maxUpdate 1.
# node-1's report before its change is never sent (fault switch label-patch-fails): its agent then
# marks the slot committing in a write of its own, or it could not change at all; its report after
# the transaction fails (report-after-fails, as if the API server refused it): its agent then
# releases the slot in a write of its own, so its entry says done and the coordinator frees the
# slot at once (not a lease later). Both nodes roll out, one at a time; node-2's mark goes with its
# `installing`; node-1's next report says what it runs.
# seconds-about: 30
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
rollout_testbed
nodes=(node-1 node-2)
SHIMKEEPER_FAULT_SWITCH=label-patch-fails,report-after-fails rollout_agents 1 1 rollout=yes
rollout_agents 2 2 rollout=yes
kube_wait_for 60 coordinator_elected || fail "no coordinator was elected"
rollout_record

one_at_a_time='  nodeSelector: {rollout: "yes"}
  rolloutStrategy: {rolling: {maxUpdate: 1}}'
kube_shim_yaml demo "$SERVER_URL/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")" "$one_at_a_time" |
    kube_admin apply -f - >/dev/null
released_alone() { grep -q 'released slot demo-slot-[0-9]* (the Node report failed' "$T/roots/node-1.log"; }
kube_wait_for 90 released_alone ||
    fail "node-1 did not release its slot on its own after its report failed: $(grep 'rollout:' "$T/roots/node-1.log" | tail -n 10)"
grep -q 'SHIMKEEPER_FAULT_SWITCH=report-after-fails' "$T/roots/node-1.log" ||
    fail "node-1's report never failed: the path was not exercised"
grep -q 'SHIMKEEPER_FAULT_SWITCH=label-patch-fails' "$T/roots/node-1.log" ||
    fail "node-1's report before the change was sent: the path was not exercised"
both_done() { rollout_finished_on demo 1 "${nodes[@]}" && [[ -z "$(rollout_slot_holders)" ]]; }
kube_wait_for 90 both_done ||
    fail "not both nodes finished demo: $(for n in "${nodes[@]}"; do echo "$n $(rollout_annotation "$n" demo)"; done)"
# node-1's entry said done in a write of its own, with no report beside it (the checker fails
# the record for that, as it should: its words are what is checked here).
released=$(python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/release_with_report.py" "$T/nodes.events" demo 1 || true)
grep -qx 'released without a report in the same write (1): node-1' <<<"$released" ||
    fail "node-1's release is not in the record as a write of its own: $released"
marks=$(python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/committing_with_report.py" "$T/nodes.events" demo 1 || true)
if ! grep -qx 'committing marks of demo generation 1: 2, in the same write as installing: 1' <<<"$marks" ||
    ! grep -q '^marked apart from installing (1): node-1(' <<<"$marks"; then
    fail "node-1's mark is not in the record as a write of its own beside node-2's with its report: $marks"
fi
# node-1 never said `installing` (its report before the change was never sent), so the record
# shows node-2's change only; node-1's log shows its slot around its change.
report=$(rollout_check demo 1 "" --nodes node-2) || fail "the rollout broke its bound: $report"
rollout_log_order "$T/roots/node-1.log" demo ||
    fail "node-1's log lacks slot, change, release in order: $(grep 'rollout:' "$T/roots/node-1.log" | tail -n 10)"
echo "$report"
echo "$marks"
pass "node-1's reports failed and its slot was marked and released in writes of their own; both nodes rolled out one at a time"
