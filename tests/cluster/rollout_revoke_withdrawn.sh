#!/usr/bin/env bash
# A revoke is withdrawn when the holder renewed after all. The coordinators run with their Node
# watch far behind (fault switch holds-unseen: their view takes in no node's slot entry), so the
# coordinator believes node-1 silent and revokes its slot a lease after the grant, although
# node-1, held at its first change (past its point of no return), renews on its own Node all the
# while. Before it frees the revoked slot the coordinator reads node-1's Node (a quorum read),
# sees entries it had not judged, and withdraws the revoke; node-2 does not change until node-1
# has committed, and everything finishes within the bound, counted from the transactions.
# With ROLLOUT_COORDINATOR_SWITCHES=holds-unseen,revoke-unchecked (the coordinator frees a
# revoked slot without that read: cluster.rollout_revoke_checks_fail) this fails, saying node-2
# changed beside node-1.
# seconds-about: 75
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
rollout_require_fault_build
export SHIMKEEPER_FAULT_SWITCH=${ROLLOUT_COORDINATOR_SWITCHES:-holds-unseen}
rollout_testbed
unset SHIMKEEPER_FAULT_SWITCH
nodes=(node-1 node-2)
export ROLLOUT_STEPS=$T/steps
: >"$ROLLOUT_STEPS"
release=$T/release-node-1
ROLLOUT_HOLD_UNTIL=$release rollout_agents 1 1 rollout=yes
rollout_agents 2 2 rollout=yes
reached() { grep -q "^$1 $2 " "$ROLLOUT_STEPS"; } # NODE STEP
coordinators_say() { grep -h "$1" "$T"/coord-*.log; }

kube_wait_for 60 coordinator_elected || fail "no coordinator was elected"
echo "--- node-1 takes the slot and stops at its first change, renewing on its Node"
kill -STOP "${ROLLOUT_PIDS[node-2]}"
kube_shim_yaml demo "$SERVER_URL/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")" \
    "  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: 1}}" | kube_admin apply -f - >/dev/null
kube_wait_for 60 reached node-1 links || fail "node-1 never reached its first change: $(tail -n 20 "$T/roots/node-1.log")"
kill -CONT "${ROLLOUT_PIDS[node-2]}"
asked() { [[ "$(kube_admin get node node-2 -o jsonpath='{.metadata.annotations.shim\.containerd\.x-k8s\.io/slot_requests}')" == *demo* ]]; }
kube_wait_for 60 asked || fail "node-2 did not ask for a slot: $(tail -n 20 "$T/roots/node-2.log")"
pass "node-1 holds demo-slot-0 past its point of no return; node-2 asks"

echo "--- the coordinator, blind to node-1's renewals, revokes; its read of node-1's Node withdraws it"
withdrawn() { coordinators_say "withdrew the revoke of rollout slot Lease demo-slot-0: node node-1" >/dev/null; }
revoked_at=""
# Bounded from here, not from the script's start: a slow test bed under load must not eat the
# revoke's own time (a lease, then its check).
watch_from=$SECONDS
while ! withdrawn; do
    ! reached node-2 links || fail "node-2 changed while node-1 was past its point of no return: $(coordinators_say demo-slot-0 | tail -n 4)"
    [[ -n $revoked_at ]] || ! coordinators_say "revoked rollout slot Lease demo-slot-0" >/dev/null || revoked_at=$SECONDS
    ((SECONDS - watch_from < 75)) || fail "no revoke of demo-slot-0 was withdrawn: $(coordinators_say demo-slot-0 | tail -n 4)"
    sleep 0.5 # sampling node-2's steps for the whole span, not waiting on a condition
done
[[ -n $revoked_at ]] || fail "the coordinator withdrew a revoke it never logged"
pass "revoked by a coordinator that saw no renewal, withdrawn after its read of node-1's Node; node-2 waits"

echo "--- node-1 commits; then node-2 gets the slot and finishes"
touch "$release"
kube_wait_for 30 reached node-1 commit || fail "node-1 did not commit: $(tail -n 20 "$T/roots/node-1.log")"
kube_wait_for 150 rollout_all_finished demo 1 ||
    fail "not every node finished: $(for n in "${nodes[@]}"; do echo "$n $(rollout_annotation "$n" demo)"; done); $(coordinators_say demo-slot | tail -n 6)"
overlap=$(rollout_overlap 1 "${nodes[@]}") || fail "the transactions broke the bound: $overlap"
echo "$overlap"
pass "both finished, never more than 1 node past its point of no return, counted from the transactions"
echo "PASS"
