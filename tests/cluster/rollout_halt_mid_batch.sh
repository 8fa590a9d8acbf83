#!/usr/bin/env bash
# A failure halts the rollout even while the coordinator is granting a batch of slots on a slow API
# server. Both coordinator candidates run with SHIMKEEPER_FAULT_SWITCH=grant-slow (fault-injection
# builds): each slot grant waits 300 ms before its create, standing in for an API server that
# answers slowly under load. Twenty nodes ask for slots of Shim demo (maxUpdate 20) while both
# candidates are stopped, so that the leader finds all twenty requests at once and grants them in one
# step, node-1 first (name order); node-1's agent refuses downloads over 1000 bytes, so it fails as
# soon as it holds its slot.
#   - The rollout halts on node-1's failure (RolloutHalted=True).
#   - At most eight slots are granted (created) after node-1 reported its failure: a grant step
#     sends its creates in groups of four (k_grants_together) and, 200 ms after it began, reads
#     its watches before it decides the rest, so only creates decided before the failure was
#     seen land after it (a group, 4, here unloaded). A step that granted its whole batch would
#     hand out the other slots over 1.5 s, most of them after the failure (seen: with the cut
#     removed, 16).
#   - No node changed without a slot (rollout_check).
# seconds-about: 40
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
"$SHIMKEEPER" -o json version | grep -q '"grant-slow"' ||
    { echo "skip: $SHIMKEEPER is not a -DSHIMKEEPER_FAULT_INJECTION=ON build"; exit 77; }
export SHIMKEEPER_FAULT_SWITCH=grant-slow
rollout_testbed
unset SHIMKEEPER_FAULT_SWITCH
nodes=(node-{1..20})
rollout_agents 1 20 rollout=yes
printf '\n[fetch]\nmax_size = 1000\n' >>"$T/roots/node-1/etc/shimkeeper/shimkeeper.toml"
rollout_record
kube_wait_for 60 coordinator_elected || fail "no coordinator was elected"

asked() { # NODE: its Node asks for a slot of Shim demo
    kube_admin get node "$1" -o jsonpath='{.metadata.annotations.shim\.containerd\.x-k8s\.io/slot_requests}' |
        grep -q '"demo"'
}
all_asked() {
    local node
    for node in "${nodes[@]}"; do asked "$node" || return 1; done
}
halted() { [[ "$(kube_admin get shim demo -o jsonpath='{.status.conditions[?(@.type=="RolloutHalted")].status}')" == True ]]; }

for pid in "${COORDINATOR_PIDS[@]}"; do kill -STOP "$pid"; done
kube_shim_yaml demo "$SERVER_URL/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")" \
    "  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: 20}}" | kube_admin apply -f - >/dev/null
kube_wait_for 30 all_asked || fail "not every node asked for a slot"
for pid in "${COORDINATOR_PIDS[@]}"; do kill -CONT "$pid"; done

kube_wait_for 60 halted || fail "node-1's failure did not halt the rollout: $(rollout_slot_holders)"
read -r slot holder _ <<<"$(rollout_failed_slot)"
[[ $holder == node-1 ]] || fail "the failed slot ($slot) is held by '$holder', not node-1"
# The grants on their way when the failure came have landed once the record stops growing.
slot_events() { grep -c -- '-slot-' "$T/leases.events" || true; }
settled() { local a; a=$(slot_events); sleep 1; ((a == $(slot_events))); }
kube_wait_for 30 settled || fail "slot Leases kept changing after the halt"
# Grants are the coordinator's creates and hand-overs of slot Leases; a grant made before the
# failure may still be taken after it (on its node's Node), which this step cannot prevent and does
# not count.
# After what: node-1's own report of its failure on its Node (resourceVersions are one etcd
# revision across kinds), the moment the API server knew; the coordinator's mark on the Lease
# comes only once it has read that, which a step that never reads its watches postpones.
read -r count granted_after total < <(python3 -S - "$T/leases.events" "$T/nodes.events" <<'PY'
import json, sys
reported = None
for line in open(sys.argv[2]):
    node = json.loads(line)["object"]["metadata"]
    held = node.get("annotations", {}).get("shim.containerd.x-k8s.io/held_demo")
    if node["name"] == "node-1" and held and json.loads(held).get("failed"):
        reported = int(node["resourceVersion"])
        break
after, total = [], 0
grant_of = {}  # Lease name -> its grant id as last seen
for line in open(sys.argv[1]):
    event = json.loads(line)
    lease = event["object"]
    meta = lease["metadata"]
    if "-slot-" not in meta["name"]:
        continue
    if event["type"] == "DELETED":
        grant_of.pop(meta["name"], None)
        continue
    # A grant: a create, or a hand-over (an update under a new grant id).
    grant = (meta.get("annotations") or {}).get("shim.containerd.x-k8s.io/grant") or meta["uid"]
    anew = event["type"] == "ADDED" or grant_of.get(meta["name"], grant) != grant
    grant_of[meta["name"]] = grant
    if not anew:
        continue
    total += 1
    if reported is not None and int(lease["metadata"]["resourceVersion"]) > reported:
        after.append(lease["spec"].get("holderIdentity", "?"))
print(len(after) if reported is not None else -1, ",".join(after) or "-", total)
PY
)
((count >= 0)) || fail "node-1's Node never reported its failure in the record"
((total > 0)) || fail "the record holds no slot grant: it proves nothing"
# Each create decided before the failure's watch event reached the coordinator can land after
# it: a group of four per 300 ms the event is late. 8 leaves 0.3 s more for a loaded machine;
# without the cut every group after node-1's is granted (16).
((count <= 8)) || fail "$count slots were granted after node-1 reported its failure ($granted_after; at most 8: those decided before it was seen)"
grep -q "granted rollout slot demo-slot-" "$T"/coord-*.log || fail "no coordinator log shows a grant"

# No node changed without a slot (rollout_timeline.py, proven against broken builds by
# rollout_checks_fail.sh), on a record that covers node-10's change: its grant was decided right
# after node-1's create, before node-1 could fail.
report=$(rollout_check demo 20 "" --nodes node-10) ||
    fail "a node changed without a slot, or the record misses node-10's change: $report"
echo "halted on node-1; slots granted after it reported its failure: $count ($granted_after) of $total"
