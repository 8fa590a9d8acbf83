#!/usr/bin/env bash
# A halt halts only its Shim. Two rolling Shims applied together on 3 agents (sandbox roots),
# maxUpdate 1 each: `good`, and `bad` whose sha256 no download matches. node-1, alone at first,
# takes both slots in one transaction, which fails on `bad`'s artifact; only `bad`'s slot is marked
# failed (RolloutHalted=True for bad), `good`'s slot goes back and `good` reaches every node, its
# rollout never halted, one node at a time.
# seconds-about: 40
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
rollout_testbed
rate=$(stat -c %s "$T/www/demo.tar.gz") # one second per download
nodes=(node-1 node-2 node-3)
rollout_agents 1 3 rollout=yes
kube_wait_for 60 coordinator_elected || fail "no coordinator was elected"
rollout_record

strategy='  nodeSelector: {rollout: "yes"}
  rolloutStrategy: {rolling: {maxUpdate: 1}}'
# node-1 alone first, so that it takes both slots in one transaction. Every agent waits until the
# coordinator has written both Shims' slot counts: an agent that saw one count before the other
# would ask for (and take) that Shim's slot alone.
for node in "${nodes[@]}"; do kill -STOP "${ROLLOUT_PIDS[$node]}"; done
{
    kube_shim_yaml good "$SERVER_URL/slow/$rate/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")" "$strategy
  binary: containerd-shim-demo-v2"
    echo "---"
    kube_shim_yaml bad "$SERVER_URL/demo.tar.gz" "$(printf '%064d' 0)" "$strategy"
} | kube_admin apply -f - >/dev/null
counted() { [[ "$(kube_admin get shim "$1" -o jsonpath='{.status.observedGeneration}/{.status.slots}')" == 1/1 ]]; }
kube_wait_for 60 counted good || fail "good's slot count was never written: $(kube_admin get shim good -o jsonpath='{.status}')"
kube_wait_for 60 counted bad || fail "bad's slot count was never written: $(kube_admin get shim bad -o jsonpath='{.status}')"
kill -CONT "${ROLLOUT_PIDS[node-1]}"

halted() { # SHIM STATUS
    [[ "$(kube_admin get shim "$1" -o jsonpath='{.status.conditions[?(@.type=="RolloutHalted")].status}')" == "$2" ]]
}
kube_wait_for 60 halted bad True || fail "bad's rollout never halted: $(kube_admin get shim bad -o jsonpath='{.status}')"
for node in "${nodes[@]:1}"; do kill -CONT "${ROLLOUT_PIDS[$node]}"; done
all_good() {
    rollout_finished_on good 1 "${nodes[@]}"
}
kube_wait_for 120 all_good ||
    fail "good did not reach every node: $(for n in "${nodes[@]}"; do echo "$n $(rollout_annotation "$n" good)"; done)"
halted good False || fail "good's rollout is halted: $(kube_admin get shim good -o jsonpath='{.status.conditions}')"
# Nor did a node ever say good failed (every version of every Node in the record).
python3 -S - "$T/nodes.events" <<'PY' || fail "a node reported good failed"
import json, sys
text = open(sys.argv[1]).read(); dec = json.JSONDecoder(); at = 0; seen = 0
while True:
    while at < len(text) and text[at].isspace(): at += 1
    if at >= len(text): break
    e, at = dec.raw_decode(text, at)
    note = (e["object"]["metadata"].get("annotations") or {}).get("shim.containerd.x-k8s.io/good")
    if note:
        seen += 1
        if json.loads(note).get("state") == "failed":
            print(e["object"]["metadata"]["name"], note); sys.exit(1)
sys.exit(0 if seen else 1)
PY
failed_slots=$(kube_admin get leases -n shimkeeper-system -o json | python3 -S -c 'import json, sys
print(" ".join(sorted(l["metadata"]["name"] for l in json.load(sys.stdin)["items"]
                      if (l["metadata"].get("annotations") or {}).get("shim.containerd.x-k8s.io/failed"))))')
[[ $failed_slots == bad-slot-0 ]] || fail "failed slots: '$failed_slots', not bad-slot-0 alone"
# The point of the test: node-1 held both slots when bad failed (else it proves nothing).
grep "Shim/good generation 1 not changed here" "$T/roots/node-1.log" ||
    fail "node-1 did not hold good's slot when bad failed: $(grep "rollout:" "$T/roots/node-1.log" | head -20)"
report=$(rollout_check good 1 "" --nodes "${nodes[*]}") || fail "good's rollout broke its bound: $report"
echo "$report"
pass "bad halted alone (bad-slot-0 failed); good reached all 3 nodes one at a time, never halted"
