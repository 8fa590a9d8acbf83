#!/usr/bin/env bash
# One bad node halts the rollout, and both ways to resume it. node-a is a real sandboxed node
# (systemd --user + containerd) whose containerd refuses any config naming handler `demo`; node-1..7
# are sandbox roots. Shim demo, maxUpdate 2, a download of about a second. The sandbox agents are
# paused until node-a holds a slot, so node-a fails early:
#   - node-a rolls back, its slot is marked failed, RolloutHalted=True names node-a (`kubectl get
#     shims` shows it), a Warning Event on the Shim; after the failure no node takes a slot
#     (rollout_no_slot_after; rollout_coordinator_checks_fail.sh shows it failing), and the only
#     nodes that change are those that held one then;
#   - a new generation (the spec fixed: handler demo2) rolls out to all 8 nodes;
#   - then a node's own problem (node-5's agent allowed downloads of 1000 bytes at most) halts
#     generation 3;
#     fixed on the node, `kubectl delete lease` of the failed slot resumes the same generation.
# Each bound is checked on a record that must cover the nodes it is about (rollout_check --nodes:
# an empty or partial record fails; rollout_checks_fail.sh shows it on a broken build).
# seconds-about: 50
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
node_shim_serve
node_shim_artifact demo v1
node_shim_artifact demo v2
rate=$(stat -c %s "$T/artifacts/demo-v1.tar.gz")

kube_create_node node-a rollout=yes
bash "$SHIMKEEPER_SOURCE_DIR/tests/support/cluster_node.sh" "$T/a" node-a \
    "$(rollout_node_kubeconfig node-a)" >"$T/a.out" 2>&1 &
sk_track $!
rollout_agents 1 7 rollout=yes
kube_wait_for 90 test -e "$T/a/ready" || fail "node a did not come up: $(cat "$T/a.out")"
nodes=(node-a node-1 node-2 node-3 node-4 node-5 node-6 node-7)
(
    source "$T/a/node.env"
    node_unit_dropin 60-refuse-demo "[Service]
ExecStartPre=/bin/sh -c '! grep -rq \"runtimes\\.demo\\]\\|runtimes\\.\\\"demo\\\"\\]\\|runtimes\\.demo\$\" $T/a/etc/containerd'"
)
config_a=$(source "$T/a/node.env" && node_config_digest)

# shim_yaml VARIANT HANDLER: Shim demo with that artifact and handler, maxUpdate 2.
shim_yaml() {
    kube_shim_yaml demo "$SERVER_URL/slow/$rate/demo-$1.tar.gz" "$(node_shim_digest demo "$1")" \
        "  handler: $2
  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: 2}}"
}
state_of() { python3 -S -c 'import json, sys; s = json.loads(sys.argv[1] or "{}"); print("%s@%s" % (s.get("state"), s.get("generation")))' "$(rollout_annotation "$1" demo)"; }
done_at() { rollout_finished "$1" demo "$2"; } # NODE GENERATION
all_done() {
    rollout_finished_on demo "$1" "${nodes[@]}"
}
halted() { [[ "$(kube_admin get shim demo -o jsonpath='{.status.conditions[?(@.type=="RolloutHalted")].status}')" == "$1" ]]; }
halt_message() { kube_admin get shim demo -o jsonpath='{.status.conditions[?(@.type=="RolloutHalted")].message}'; }
# Every slot left is the failed one: the nodes that held one at the failure have finished, and
# (the point of the test) nobody took another.
only_failed_slots() {
    kube_admin get leases -n shimkeeper-system -o json | python3 -S -c 'import json, sys
sys.exit(any("-slot-" in l["metadata"]["name"] and
             not l["metadata"].get("annotations", {}).get("shim.containerd.x-k8s.io/failed")
             for l in json.load(sys.stdin)["items"]))'
}

rollout_record
echo "--- generation 1: node-a fails"
for node in "${nodes[@]:1}"; do kill -STOP "${ROLLOUT_PIDS[$node]}"; done
shim_yaml v1 demo | kube_admin apply -f - >/dev/null
kube_wait_for 60 rollout_holds node-a || fail "node-a never took a slot: $(tail -n 20 "$T/a/agent.log")"
for node in "${nodes[@]:1}"; do kill -CONT "${ROLLOUT_PIDS[$node]}"; done
kube_wait_for 120 halted True || fail "RolloutHalted never became True: $(kube_admin get shim demo -o jsonpath='{.status}')"
read -r slot holder failed_rv <<<"$(rollout_failed_slot)"
[[ $holder == node-a ]] || fail "the failed slot $slot is held by '$holder', not node-a"
[[ "$(halt_message)" == *"node node-a failed"*"kubectl -n shimkeeper-system delete lease $slot"* ]] ||
    fail "RolloutHalted says: $(halt_message)"
[[ "$(state_of node-a)" == failed@1 ]] || fail "node-a says $(state_of node-a)"
[[ "$(source "$T/a/node.env" && node_config_digest)" == "$config_a" ]] || fail "node-a's config was not rolled back"
kube_admin get shims | grep -E '^demo .* True ' >/dev/null || fail "kubectl get shims does not show the halt: $(kube_admin get shims)"
kube_admin get events -A -o json | grep -q '"reason": "RolloutHalted"' || fail "no RolloutHalted Event"
kube_wait_for 60 only_failed_slots || fail "slots other than the failed one stayed: $(rollout_failed_slot)"
status=$("$SHIMKEEPER" --root "$T/roots/node-7" status)
grep -q "HALTED: node node-a failed" <<<"$status" || fail "shimkeeper status on node-7 does not show the halt: $status"
# Every holder of a slot at the failure finishes; nobody takes a slot afterwards.
report=$(rollout_check demo 2 "" --nodes node-a) || fail "generation 1 broke its bound: $report"
echo "$report"
rollout_no_slot_after "$failed_rv" || fail "a slot was taken after the failure"
changed=0
for node in "${nodes[@]:1}"; do done_at "$node" 1 && changed=$((changed + 1)); done
pass "node-a failed and halted generation 1: $changed of 7 other nodes changed (those before it or holding a slot with it), none after"

echo "--- generation 2: the spec fixed (handler demo2) rolls out everywhere"
since=$(rollout_rv)
shim_yaml v1 demo2 | kube_admin apply -f - >/dev/null
kube_wait_for 180 all_done 2 || fail "generation 2 did not reach every node: $(for n in "${nodes[@]}"; do echo "$n $(state_of "$n")"; done)"
kube_wait_for 30 halted False || fail "RolloutHalted stayed $(halt_message)"
(source "$T/a/node.env" && node_cri_has_handler demo2) || fail "node-a's CRI lacks demo2"
report=$(rollout_check demo 2 "$since" --nodes "${nodes[*]}") || fail "generation 2 broke its bound: $report"
pass "generation 2 reached all 8 nodes; RolloutHalted is False"

echo "--- generation 3: node-5's own problem halts it; fixed there, the failed slot deleted resumes it"
agent_toml=$T/roots/node-5/etc/shimkeeper/shimkeeper.toml
cp "$agent_toml" "$T/node-5-agent.toml"
printf '\n[fetch]\nmax_size = 1000\n' >>"$agent_toml"
shim_yaml v2 demo2 | kube_admin apply -f - >/dev/null
kube_wait_for 120 halted True || fail "node-5's failure did not halt generation 3"
read -r slot holder failed_rv <<<"$(rollout_failed_slot)"
[[ $holder == node-5 ]] || fail "the failed slot is held by '$holder', not node-5"
kube_wait_for 60 only_failed_slots || fail "slots other than the failed one stayed after generation 3 halted"
cp "$T/node-5-agent.toml" "$agent_toml"
since=$(rollout_rv)
kube_admin -n shimkeeper-system delete lease "$slot" >/dev/null
kube_wait_for 180 all_done 3 || fail "generation 3 did not resume: $(for n in "${nodes[@]}"; do echo "$n $(state_of "$n")"; done)"
kube_wait_for 30 halted False || fail "RolloutHalted stayed $(halt_message)"
report=$(rollout_check demo 2 "$since" --nodes node-5) || fail "the rollout broke its bound: $report"
echo "$report"
pass "node-5 halted generation 3; fixed and its slot deleted, generation 3 reached all 8 nodes"
