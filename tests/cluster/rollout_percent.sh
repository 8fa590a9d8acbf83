#!/usr/bin/env bash
# maxUpdate as a percentage. "25%" over 8 selected nodes (sandbox roots) is 2 slots, resolved by the
# coordinator into status.slots; changed to "50%" mid-rollout it is 4 for the next slot taken: the
# record shows at most 2 holders before the change and up to 4 (reached) after, and every node
# finishes.
# seconds-about: 55
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
rollout_testbed
# Eight seconds a download: the change of maxUpdate lands while most nodes still wait.
rate=$(($(stat -c %s "$T/www/demo.tar.gz") / 8))
rollout_agents 1 8 rollout=yes

shim_yaml() {
    kube_shim_yaml demo "$SERVER_URL/slow/$rate/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")" \
        "  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: \"$1\"}}"
}
# The nodes that applied the Shim (any generation) and hold no slot, in one read of each list.
count_finished() {
    python3 -S - <(kube_admin get nodes -o json) <(kube_admin get leases -n shimkeeper-system -o json) <<'PY'
import json, sys
holding = {l["spec"].get("holderIdentity") for l in json.load(open(sys.argv[2]))["items"]
           if "-slot-" in l["metadata"]["name"]}
n = 0
for node in json.load(open(sys.argv[1]))["items"]:
    a = node["metadata"].get("annotations", {}).get("shim.containerd.x-k8s.io/demo")
    s = json.loads(a) if a else {}
    applied = s.get("state") == "installed" or "no-restart" in s.get("reason", "")
    n += applied and node["metadata"]["name"] not in holding
print(n)
PY
}
at_least_finished() { (($(count_finished) >= $1)); }
slots_are() { [[ "$(kube_admin get shim demo -o jsonpath='{.status.slots}')" == "$1" ]]; }

rollout_record
shim_yaml 25% | kube_admin apply -f - >/dev/null
kube_wait_for 60 slots_are 2 || fail "status.slots is '$(kube_admin get shim demo -o jsonpath='{.status.slots}')', not 2 (25% of 8)"
kube_wait_for 120 at_least_finished 2 || fail "no two nodes finished"
since=$(rollout_rv)
before=$(rollout_check demo 2) || fail "25%: more than 2 nodes at once: $before"
shim_yaml 50% | kube_admin apply -f - >/dev/null
kube_wait_for 60 slots_are 4 || fail "status.slots did not become 4 (50% of 8)"
kube_wait_for 180 at_least_finished 8 || fail "not every node finished: $(count_finished) of 8"
after=$(rollout_check demo 4 "$since") || fail "50%: more than 4 nodes at once: $after"
echo "before the change: $before"
echo "after the change: $after"
grep -qx 'max_holders 2' <<<"$before" || fail "25% never had 2 nodes at once"
grep -Eqx 'max_holders (3|4)' <<<"$after" || fail "50% never had more than 2 nodes at once: $after"
pass "25% of 8 = 2 slots, then 50% = 4 for the slots taken after the change; all 8 nodes finished"
