#!/usr/bin/env bash
# Crashes during a rollout. 8 agents on sandbox roots, maxUpdate 1 (so every other node waits on the
# killed worker's slot), downloads of about two seconds.
#   - a worker SIGKILLed while it holds a slot: once the lease (15 s, never renewed again) runs
#     out, not before, the coordinator revokes the slot, frees it 11 s later (nodes write no
#     Lease) and another node takes it; restarted, the worker recovers and finishes;
#   - the leading `shimkeeper coordinate` SIGKILLed mid-rollout: the other candidate takes over
#     and the rollout goes on (it resolves the status as before);
#   - every node finishes, and the API server's record shows at most 1 holder at any moment and
#     no node changing without a slot; the record covers every node's change (an empty or partial
#     one fails: rollout_checks_fail.sh shows these checks failing on a broken build).
# seconds-about: 65
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
rollout_testbed
rate=$(($(stat -c %s "$T/www/demo.tar.gz") / 2))
rollout_agents 1 8 rollout=yes
nodes=(node-1 node-2 node-3 node-4 node-5 node-6 node-7 node-8)

holders() { rollout_slot_holders; }
coordinator() { kube_admin get lease shimkeeper-coordinator -n shimkeeper-system -o jsonpath='{.spec.holderIdentity}'; }
all_finished() {
    rollout_finished_on demo "" "${nodes[@]}" && [[ -z "$(holders)" ]]
}
restart_agent() {
    "$SHIMKEEPER" --root "$T/roots/$1" run --no-restart --status-file /run/status.json \
        >>"$T/roots/$1.log" 2>&1 &
    ROLLOUT_PIDS[$1]=$!
    sk_track $!
}

has_coordinator() { [[ -n $(coordinator 2>/dev/null) ]]; }
kube_wait_for 60 has_coordinator || fail "no coordinator was elected"
rollout_record
kube_shim_yaml demo "$SERVER_URL/slow/$rate/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")" \
    "  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: 1}}" | kube_admin apply -f - >/dev/null

# A worker killed while it holds a slot; the takeover must wait for the lease to run out and the
# revoke after it (rollout_takeover_window: rollout_coordinator_checks_fail.sh shows it failing).
rollout_kill_a_holder
victim=$VICTIM slot=$SLOT
taken=$(rollout_takeover_window) || fail "$taken: $(holders)"
grep -q "revoked rollout slot Lease $slot: holder $victim did not renew it" "$T"/coord-*.log ||
    fail "no coordinator says it revoked $slot: $(cat "$T"/coord-*.log)"
grep -q "freed rollout slot Lease $slot: revoked" "$T"/coord-*.log ||
    fail "no coordinator says it freed the revoked $slot: $(cat "$T"/coord-*.log)"
pass "$victim was killed holding $slot; the coordinator revoked and freed it, and another node took it: $taken"

lead=$(coordinator)
[[ -n ${COORDINATOR_PIDS[$lead]:-} ]] || fail "the coordinator Lease names $lead, not a candidate"
kill -KILL "${COORDINATOR_PIDS[$lead]}"
new_leader() { local h; h=$(coordinator); [[ -n $h && $h != "$lead" ]]; }
kube_wait_for 60 new_leader || fail "nobody took over from coordinator $lead"
pass "coordinator $lead killed; $(coordinator) took over"
restart_agent "$victim"
kube_wait_for 240 all_finished ||
    fail "not every node finished: $(for n in "${nodes[@]}"; do echo "$n $(rollout_annotation "$n" demo)"; done; holders)"
report=$(rollout_check demo 1 "" --nodes "${nodes[*]}") || fail "the rollout broke its bound: $report"
echo "$report"
[[ "$(kube_admin get shim demo -o jsonpath='{.status.nodes.selected}')" == 8 ]] ||
    fail "the new coordinator does not keep the status"
pass "both restarted agents finished; all 8 nodes done, one at a time, no change without a slot"
