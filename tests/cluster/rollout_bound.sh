#!/usr/bin/env bash
# A rolling rollout never has more than maxUpdate nodes changing. 20 agents (node-a and node-b real
# sandboxed nodes with systemd --user + containerd, node-1..18 on sandbox roots), a Shim with
# maxUpdate 3 whose artifact downloads slowly (about a second), so nodes hold their slots long
# enough to overlap. The API server's own record (Lease and Node watch events, ordered by
# resourceVersion) must show: never more than 3 slot holders, exactly 3 at some point, every node
# taking one slot once, and no node starting its change (annotation `installing`) without a slot;
# each agent's log has slot, change, release in that order; each node's release and its report of
# the outcome are one write of its Node, and so are its committing mark and its `installing`
# before the change, and (for most nodes: all but node-1..8 below) its take of the slot. Then a second Shim on 10 of the nodes
# with maxUpdate 2 is installed and deleted: the uninstall follows the same bound, each node's label
# goes while it holds a slot (before its removal), the RuntimeClass and the object go after the last
# node. node-1..8 run with every slot their watch took looking too old for the reconcile to use
# as it is (fault switch claims-age, as on a loaded machine): they take the grant at once, a write,
# and still take one slot each, never releasing it to ask for another.
# seconds-about: 60
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_shim.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
kube_require_peers
node_reexec_in_namespace "$@"
sk_init
kube_up "$T/kube"
coordinator_start coord-1
# Open Lease watches (the API server's own, the coordinator's) before any agent starts.
lease_watches() {
    kube_admin get --raw /metrics | awk '/^apiserver_longrunning_requests\{/ && /verb="WATCH"/ &&
        /resource="leases"/ { sum += $NF } END { printf "%d\n", sum }'
}
kube_wait_for 60 coordinator_elected || fail "no coordinator was elected"
lease_watches_before=$(lease_watches)
node_shim_serve
node_shim_artifact demo v1
node_shim_artifact ten v1
rate=$(stat -c %s "$T/artifacts/demo-v1.tar.gz") # bytes per second: one second per download

start_real_node() {
    kube_create_node "node-$1" rollout=yes group=ten
    bash "$SHIMKEEPER_SOURCE_DIR/tests/support/cluster_node.sh" "$T/$1" "node-$1" \
        "$(rollout_node_kubeconfig "node-$1")" >"$T/$1.out" 2>&1 &
    sk_track $!
}
start_real_node a
start_real_node b
SHIMKEEPER_FAULT_SWITCH=claims-age rollout_agents 1 8 rollout=yes group=ten
rollout_agents 9 18 rollout=yes
for letter in a b; do
    kube_wait_for 90 test -e "$T/$letter/ready" || fail "node $letter did not come up: $(cat "$T/$letter.out")"
done
nodes=(node-a node-b)
for ((i = 1; i <= 18; i++)); do nodes+=("node-$i"); done
log_of() { [[ $1 == node-[ab] ]] && echo "$T/${1#node-}/agent.log" || echo "$T/roots/$1.log"; }

# all_done SHIM GENERATION NODE...: each node finished that generation (installed on a real
# node, applied without restart on a sandbox root) and no slot is held.
all_done() {
    rollout_finished_on "$1" "$2" "${@:3}" && [[ -z "$(rollout_slot_holders)" ]]
}

# Lease watch events the API server delivered (to the agents and the coordinator candidate).
lease_watch_events() {
    kube_admin get --raw /metrics | awk '/^apiserver_watch_events_total\{/ && /[Ll]ease/ {
        sum += $NF } END { printf "%d\n", sum }'
}
rollout_record
events_before=$(lease_watch_events)
echo "--- Shim demo, maxUpdate 3, on 20 nodes"
# The sandbox agents ask only once the coordinator has taken in the new Shim (its status at
# generation 1): a request that comes while the pass the Shim started still runs is granted by
# that pass, and on a loaded machine all of them did, so the check of grants made at once on a
# request below had nothing to see. node-a and node-b may ask at any time: 2 of the 3 slots.
for ((i = 1; i <= 18; i++)); do kill -STOP "${ROLLOUT_PIDS[node-$i]}"; done
kube_shim_yaml demo "$SERVER_URL/slow/$rate/demo-v1.tar.gz" "$(node_shim_digest demo v1)" \
    "  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {type: rolling, rolling: {maxUpdate: 3}}" | kube_admin apply -f - >/dev/null
taken_in() { [[ "$(kube_admin get shim demo -o jsonpath='{.status.observedGeneration}')" == 1 ]]; }
kube_wait_for 60 taken_in || fail "the coordinator did not take in Shim demo: $(tail -n 20 "$T/coord-1.log")"
for ((i = 1; i <= 18; i++)); do kill -CONT "${ROLLOUT_PIDS[node-$i]}"; done
kube_wait_for 240 all_done demo 1 "${nodes[@]}" ||
    fail "not every node finished demo: $(for n in "${nodes[@]}"; do echo "$n $(rollout_annotation "$n" demo)"; done)"

report=$(rollout_check demo 3) || fail "the rollout broke its bound: $report"
echo "$report"
# No agent watches objects about other nodes. Each slot event then reaches its holder,
# the coordinator and this test's recorder, a few per node; with every agent watching every slot
# it would be about 2.8 x N^2 (~1100 here).
events=$(($(lease_watch_events) - events_before))
echo "Lease watch events during the rollout of 20 nodes: $events"
((events <= 25 * ${#nodes[@]})) ||
    fail "$events Lease watch events for ${#nodes[@]} nodes: agents see other nodes' slots"
grep -qx 'max_holders 3' <<<"$report" || fail "never 3 nodes at once, so the bound was not exercised: $report"
# A slot that goes is granted again at once, not after the next whole pass, and so is a
# slot a node asks for (the rollout's start).
at_once=$(grep -c 'granted rollout slot demo-slot-.*(at once: a slot went' "$T/coord-1.log" || true)
echo "grants of demo made at once when a slot went: $at_once (of $((${#nodes[@]} - 3)) handoffs)"
((at_once > 0)) || fail "no slot was granted on its release; each handoff waited for a pass: $(grep 'granted rollout slot' "$T/coord-1.log" | tail -n 5)"
asked=$(grep -c 'granted rollout slot demo-slot-.*(at once: .*a node asked)' "$T/coord-1.log" || true)
echo "grants of demo made at once when a node asked: $asked"
((asked > 0)) || fail "no slot was granted on a node's request; the start waited for a pass: $(grep 'granted rollout slot' "$T/coord-1.log" | head -n 5)"
for node in "${nodes[@]}"; do
    grep -q " $node=1\( \|$\)" <<<"$report" || fail "$node did not take exactly one slot: $report"
    rollout_log_order "$(log_of "$node")" demo || fail "$node's log lacks slot, change, release in order: $(tail -n 20 "$(log_of "$node")")"
done
for letter in a b; do
    [[ "$(kube_admin get node "node-$letter" -o jsonpath='{.metadata.labels.shim\.containerd\.x-k8s\.io/demo}')" == demo ]] ||
        fail "real node-$letter is not labelled for demo"
    (source "$T/$letter/node.env"; node_cri_has_handler demo) || fail "node-$letter's CRI lacks handler demo"
done
[[ "$(kube_admin get shim demo -o jsonpath='{.status.slots}')" == 3 ]] || fail "status.slots is not 3"
# One write of the Node says the outcome and frees the slot, on real and sandbox nodes alike.
released=$(python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/release_with_report.py" "$T/nodes.events" demo 1) ||
    fail "a release and its report were separate writes: $released"
echo "$released"
# And one write says `installing` and marks the slot committing, before the first change.
committing=$(python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/committing_with_report.py" "$T/nodes.events" demo 1) ||
    fail "a committing mark, or most takes, and the report before the change were separate writes: $committing"
echo "$committing"
retaken=$(cat "$T"/roots/node-[1-8].log | grep -c 'slot demo-slot-.* was claimed too long ago to use as its watch showed it: taking its grant again' || true)
echo "grants of demo taken again by node-1..8 (claims aged): $retaken"
((retaken > 0)) || fail "no node-1..8 took an aged claim's grant again: the path was not exercised"
pass "20 nodes installed demo, at most 3 at once (3 reached), one slot each, changes only inside slots"

# An idle agent keeps two watches; the one on its own slots closes once it needs none, and the
# API server sees it go at once (the watch has a connection of its own: multiplexed over HTTP/2,
# the server kept it about 40 s). Left open are those from before the agents started and this
# test's recorder's; the next Shim reopens them.
slot_watches_closed() {
    local node opened
    for node in "${nodes[@]}"; do
        opened=$(grep -c "watching this node's rollout slots" "$(log_of "$node")")
        ((opened > 0)) &&
            (($(grep -c 'the watch on them closed' "$(log_of "$node")") == opened)) || return 1
    done
}
kube_wait_for 60 slot_watches_closed || fail "not every agent closed its slot watch"
idle_lease_watches() { (($(lease_watches) <= lease_watches_before + 1)); }
kube_wait_for 5 idle_lease_watches ||
    fail "$(lease_watches) Lease watches open 5 s after every agent closed its own, $lease_watches_before before the agents started and the recorder's"

echo "--- Shim ten, maxUpdate 2, on 10 nodes: installed, then deleted"
ten=(node-a node-b node-1 node-2 node-3 node-4 node-5 node-6 node-7 node-8)
kube_shim_yaml ten "$SERVER_URL/slow/$rate/ten-v1.tar.gz" "$(node_shim_digest ten v1)" \
    "  nodeSelector: {group: ten}
  rolloutStrategy: {rolling: {maxUpdate: 2}}" | kube_admin apply -f - >/dev/null
kube_wait_for 240 all_done ten 1 "${ten[@]}" || fail "not every node installed ten"
report=$(rollout_check ten 2) || fail "the install of ten broke its bound: $report"
grep -qx 'max_holders 2' <<<"$report" || fail "ten: never 2 nodes at once: $report"
since=$(rollout_rv)
kube_admin delete shim ten --wait=false >/dev/null
gone() { ! kube_admin get shim ten >/dev/null 2>&1; }
kube_wait_for 240 gone || fail "Shim ten was not finalized: $(kube_admin get shim ten -o jsonpath='{.status}')"
for node in "${ten[@]}"; do
    [[ -z "$(rollout_annotation "$node" ten)" ]] || fail "$node still says $(rollout_annotation "$node" ten)"
done
! kube_admin get runtimeclass ten >/dev/null 2>&1 || fail "RuntimeClass ten outlived its Shim"
report=$(rollout_check ten 2 "$since") || fail "the uninstall of ten broke its bound: $report"
echo "$report"
grep -qx 'max_holders 2' <<<"$report" || fail "uninstall: never 2 nodes at once: $report"
for node in "${ten[@]}"; do
    grep -q " $node=1\( \|$\)" <<<"$report" || fail "uninstall: $node did not take exactly one slot: $report"
done
for letter in a b; do
    (source "$T/$letter/node.env"; node_cri_lacks_handler ten) || fail "node-$letter's CRI still lists ten"
done
pass "Shim ten installed and uninstalled on 10 nodes, at most 2 at once, labels off inside the slots"
