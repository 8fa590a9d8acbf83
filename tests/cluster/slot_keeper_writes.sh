#!/usr/bin/env bash
# A node's slot writes (SlotKeeper, through kube-probe) with node-bound tokens under deploy/'s
# policies, against the real API server:
#   - a renewal whose answer was lost (the API server wrote it, the node kept the older version)
#     is recognised on its 409 and renewed at the version there, instead of 409-ing for ever;
#   - a slot the coordinator freed and another node took is lost for its old holder: its renewal
#     says who holds it, and never writes it;
#   - a failure on a node whose slot was taken over still halts the rollout: a failed slot Lease
#     of that generation is created under the first absent name (not "success, nothing written").
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
probe=${SHIMKEEPER_BUILD_DIR:?}/tests/support/kube-probe
[[ -x $probe ]] || kube_skip "kube-probe is not built"
kube_require_peers
kube_up "$(mktemp -d /tmp/sk-kube.XXXXXX)"
ns=shimkeeper-system
pass() { echo "ok: $*"; }
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
kube_create_node node-x >/dev/null
kube_create_node node-y >/dev/null
as_x=$(kube_node_token_kubeconfig node-x)
as_y=$(kube_node_token_kubeconfig node-y)
field() { python3 -c 'import json, sys; d = json.load(sys.stdin)
for k in sys.argv[1].split("."): d = d[k]
print(d)' "$1"; }
lease_field() { kube_admin get lease "$1" -n $ns -o jsonpath="$2"; }

echo "--- a renewal whose answer was lost"
"$probe" "$as_x" slot $ns node-x take demo u-1 1 1 0 >"$KUBE_DIR/held-0.json"
"$probe" "$as_x" slot $ns node-x renew <"$KUBE_DIR/held-0.json" >"$KUBE_DIR/held-1.json"
renewed=$(field lease.spec.renewTime <"$KUBE_DIR/held-1.json")
# The answer of that renewal "lost": the next renewal starts from the version before it.
"$probe" "$as_x" slot $ns node-x renew <"$KUBE_DIR/held-0.json" >"$KUBE_DIR/held-2.json" 2>"$KUBE_DIR/renew.err" ||
    fail "a renewal after a lost answer failed: $(cat "$KUBE_DIR/renew.err")"
[[ -z "$(field lost <"$KUBE_DIR/held-2.json")" ]] || fail "the slot was judged lost: $(cat "$KUBE_DIR/held-2.json")"
[[ "$(lease_field demo-slot-0 '{.spec.renewTime}')" > "$renewed" ]] || fail "the Lease was not renewed again"
[[ "$(lease_field demo-slot-0 '{.metadata.resourceVersion}')" == "$(field lease.metadata.resourceVersion <"$KUBE_DIR/held-2.json")" ]] ||
    fail "the node does not hold the Lease's current version"
pass "a renewal after a lost answer adopts the version the API server has and renews"

echo "--- the slot freed by the coordinator and taken by node-y"
kube_admin delete lease demo-slot-0 -n $ns >/dev/null
"$probe" "$as_y" slot $ns node-y take demo u-1 1 1 0 >/dev/null
before=$(lease_field demo-slot-0 '{.metadata.resourceVersion}')
if "$probe" "$as_x" slot $ns node-x renew <"$KUBE_DIR/held-2.json" >"$KUBE_DIR/held-3.json" 2>"$KUBE_DIR/renew.err"; then
    fail "node-x renewed a slot node-y holds"
fi
[[ "$(field lost <"$KUBE_DIR/held-3.json")" == "node node-y holds it now" ]] ||
    fail "node-x does not know it lost the slot: $(cat "$KUBE_DIR/held-3.json") $(cat "$KUBE_DIR/renew.err")"
[[ "$(lease_field demo-slot-0 '{.metadata.resourceVersion}')" == "$before" ]] || fail "node-y's slot was written"
pass "node-x's renewal says node-y holds the slot now, and writes nothing"

echo "--- node-x's transaction fails after it lost the slot: the rollout still halts"
marked=$("$probe" "$as_x" slot $ns node-x fail "containerd refused demo" <"$KUBE_DIR/held-3.json") ||
    fail "marking the failure failed"
[[ $marked == demo-slot-1 ]] || fail "the failure was marked on '$marked', not the first absent name demo-slot-1"
[[ "$(lease_field demo-slot-1 '{.spec.holderIdentity}')" == node-x ]] || fail "demo-slot-1 is not node-x's"
[[ "$(lease_field demo-slot-1 '{.metadata.annotations.shim\.containerd\.x-k8s\.io/failed}')" == "containerd refused demo" ]] ||
    fail "demo-slot-1 does not carry the failure"
[[ "$(lease_field demo-slot-1 '{.metadata.annotations.shim\.containerd\.x-k8s\.io/generation}')" == 1 ]] ||
    fail "demo-slot-1 is not for generation 1"
[[ "$(lease_field demo-slot-0 '{.spec.holderIdentity}')" == node-y ]] || fail "node-y's slot changed"
pass "the failure is marked on demo-slot-1 (holder node-x, generation 1), node-y's slot untouched"
