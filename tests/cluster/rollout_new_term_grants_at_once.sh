#!/usr/bin/env bash
# A coordinator whose term begins while nodes already wait grants their slots as soon as its views
# are in, not a settle time and a whole pass of Shim writes later: a leader that takes over
# mid-rollout, or one started after the nodes staged.
#   - Both candidates stop (SIGTERM: each releases the Lease) before Shim demo (maxUpdate 3) is
#     applied; node-1..3 each ask for a slot with no coordinator to grant one.
#   - A third candidate starts and leads. Its first grants of demo come from the grant step its
#     views' arrival runs ("(at once: the term's views came in)" in its log), not from its first
#     pass ("(in a pass)", as before: that pass waits the settle time and writes each Shim's
#     finalizer, RuntimeClass and status first).
#   - Every node installs demo, at most 3 at once (rollout_check).
# seconds-about: 25
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
rollout_testbed
nodes=(node-1 node-2 node-3)
rollout_agents 1 3 rollout=yes
rollout_record
kube_wait_for 60 coordinator_elected || fail "no coordinator was elected"
for candidate in coord-1 coord-2; do kill -TERM "${COORDINATOR_PIDS[$candidate]}"; done
for candidate in coord-1 coord-2; do wait "${COORDINATOR_PIDS[$candidate]}" 2>/dev/null || true; done
[[ -z $(coordinator_leader) ]] || fail "the Lease still names $(coordinator_leader) after both candidates stopped"

asked() { # NODE: its Node asks for a slot of Shim demo
    kube_admin get node "$1" -o jsonpath='{.metadata.annotations.shim\.containerd\.x-k8s\.io/slot_requests}' |
        grep -q '"demo"'
}
kube_shim_yaml demo "$SERVER_URL/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")" \
    "  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: 3}}" | kube_admin apply -f - >/dev/null
for node in "${nodes[@]}"; do
    kube_wait_for 30 asked "$node" || fail "$node did not ask for a slot of demo"
done
pass "node-1..3 ask for slots of demo with no coordinator running"

coordinator_start coord-3
kube_wait_for 60 rollout_all_finished demo 1 ||
    fail "demo was not installed everywhere: $(rollout_slot_holders) ($(tail -n 20 "$T/coord-3.log"))"
first=$(grep -m1 'granted rollout slot demo-slot-' "$T/coord-3.log" || true)
[[ $first == *"(at once: "*"the term's views came in)" ]] ||
    fail "coord-3's first grant of demo did not come as its views came in: '$first'"
pass "coord-3's first grant: ${first#coordinator: }"
report=$(rollout_check demo 3) || fail "a node changed without a slot: $report"
pass "node-1..3 installed demo, at most 3 at once"
