#!/usr/bin/env bash
# Issue 8, test 4: crashes during a rollout. 8 agents on sandbox roots, maxUpdate 1 (so every other
# node waits on the killed worker's slot), downloads of about two seconds.
#   - a worker SIGKILLed while it holds a slot: once the lease (15 s, never renewed again) runs
#     out, not before, the coordinator frees the slot (no node may write another node's Lease)
#     and another node takes it; restarted, the worker recovers and finishes;
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

holders() { kube_admin get leases -n shimkeeper-system -o json | python3 -c 'import json, sys
for l in json.load(sys.stdin)["items"]:
    if "-slot-" in l["metadata"]["name"]:
        print(l["metadata"]["name"], l["spec"].get("holderIdentity", ""))'; }
coordinator() { kube_admin get lease shimkeeper-coordinator -n shimkeeper-system -o jsonpath='{.spec.holderIdentity}'; }
finished() { rollout_finished "$1" demo; }
all_finished() {
    local node
    for node in "${nodes[@]}"; do finished "$node" || return 1; done
    [[ -z "$(holders)" ]]
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

# A worker killed while it holds a slot. Chosen in one reading of the
# leases (sets slot and victim): two readings can disagree, slots change hands every few seconds.
pick_victim() {
    while read -r slot victim; do
        [[ -n $victim ]] && return 0
    done < <(holders)
    return 1
}
# Killed between two kubectl calls, the node may have just finished: then it is restarted and
# another is chosen.
for attempt in 1 2 3 4 5; do
    kube_wait_for 60 pick_victim || fail "no worker took a slot"
    kill -KILL "${ROLLOUT_PIDS[$victim]}"
    holders | grep -q "^$slot $victim\$" && break
    restart_agent "$victim"
    ((attempt < 5)) || fail "no worker could be killed while it held a slot"
done
renewed=$(kube_admin get lease "$slot" -n shimkeeper-system -o jsonpath='{.spec.renewTime}')
# The new holder and its acquisition, in one reading (sets acquired): the coordinator deleted the
# dead holder's Lease and another node created it; it keeps it for one download only, then
# deletes it and the next node creates it again.
taken_over() {
    local holder when
    read -r holder when < <(kube_admin get lease "$slot" -n shimkeeper-system \
        -o jsonpath='{.spec.holderIdentity} {.spec.acquireTime}' 2>/dev/null)
    [[ -n $holder && $holder != "$victim" ]] && acquired=$when
}
kube_wait_for 60 taken_over || fail "$victim's slot $slot was never taken over"
# The server's record: from the victim's last renewal to the new holder's acquisition.
waited=$(python3 -c 'import datetime, sys
t = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")
print(round((t(sys.argv[2]) - t(sys.argv[1])).total_seconds(), 1))' "$renewed" "$acquired")
python3 -c "import sys; sys.exit(0 if 15 <= $waited <= 20 else 1)" ||
    fail "$victim's slot was taken over ${waited}s after its last renewal (lease 15 s): $(holders)"
grep -q "freed rollout slot Lease $slot: holder $victim did not renew it" "$T"/coord-*.log ||
    fail "no coordinator says it freed $slot: $(cat "$T"/coord-*.log)"
pass "$victim was killed holding $slot; the coordinator freed it and another node took it ${waited}s after its last renewal (lease 15 s)"

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
