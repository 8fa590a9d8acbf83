#!/usr/bin/env bash
# A node's side of its rollout slot (SlotKeeper, through kube-probe) against the real API server
# under deploy/'s RBAC and policies, with both credential kinds: node-x holds a kubelet-style client
# certificate, node-y a token bound to it. The slot Leases are the coordinator's (here the admin
# plays it); a node writes only its own Node:
#   - taking and renewing a grant writes node-x's annotation held_demo (naming the grant's uid),
#     never the Lease;
#   - a grant the coordinator revoked, or freed and granted to node-y, is lost for node-x: its
#     renewal says so (and exits 1), and writes no Lease;
#   - a failure and a release are said on the node's own Node;
#   - neither credential may create, update or delete a Lease in shimkeeper-system, nor write
#     another node's Node.
# seconds-about: 20
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
as_x=$(kube_node_cert_kubeconfig node-x)
as_y=$(kube_node_token_kubeconfig node-y)
field() { python3 -S -c 'import json, sys; d = json.load(sys.stdin)
for k in sys.argv[1].split("."): d = d[k]
print(d)' "$1"; }
lease_field() { kube_admin get lease "$1" -n $ns -o jsonpath="$2"; }
held_on() { kube_admin get node "$1" -o jsonpath='{.metadata.annotations.shim\.containerd\.x-k8s\.io/held_demo}'; }
hold_field() { held_on "$1" | field "$2"; }
# grant NODE: the coordinator's grant of demo-slot-0 (generation 1) to NODE.
grant() {
    kube_admin apply -f - >/dev/null <<YAML
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata:
  name: demo-slot-0
  namespace: $ns
  labels: {shim.containerd.x-k8s.io/holder: $1}
  annotations: {shim.containerd.x-k8s.io/shim: demo, shim.containerd.x-k8s.io/uid: u-1,
                shim.containerd.x-k8s.io/generation: "1"}
spec: {holderIdentity: $1, leaseDurationSeconds: 15}
YAML
}

echo "--- node-x (kubelet certificate) takes and renews its grant on its own Node"
grant node-x
granted_rv=$(lease_field demo-slot-0 '{.metadata.resourceVersion}')
grant_uid=$(lease_field demo-slot-0 '{.metadata.uid}')
"$probe" "$as_x" slot $ns node-x take demo-slot-0 >"$KUBE_DIR/held-0.json"
[[ "$(hold_field node-x grant)" == "$grant_uid" ]] || fail "node-x's Node does not name the grant: $(held_on node-x)"
first=$(hold_field node-x renewed)
"$probe" "$as_x" slot $ns node-x renew <"$KUBE_DIR/held-0.json" >"$KUBE_DIR/held-1.json"
[[ "$(hold_field node-x renewed)" > "$first" ]] || fail "the renewal did not write node-x's entry: $(held_on node-x)"
[[ -z "$(field lost <"$KUBE_DIR/held-1.json")" ]] || fail "the slot was judged lost: $(cat "$KUBE_DIR/held-1.json")"
[[ "$(lease_field demo-slot-0 '{.metadata.resourceVersion}')" == "$granted_rv" ]] || fail "a node wrote the Lease"
pass "take and renewal write node-x's held_demo (grant $grant_uid), never the Lease"

echo "--- the coordinator revokes it: node-x's renewal says so and writes no Lease"
kube_admin annotate lease demo-slot-0 -n $ns shim.containerd.x-k8s.io/revoked="holder node-x did not renew it" >/dev/null
revoked_rv=$(lease_field demo-slot-0 '{.metadata.resourceVersion}')
if "$probe" "$as_x" slot $ns node-x renew <"$KUBE_DIR/held-1.json" >"$KUBE_DIR/held-2.json" 2>"$KUBE_DIR/renew.err"; then
    fail "node-x renewed a revoked slot"
fi
[[ "$(field lost <"$KUBE_DIR/held-2.json")" == "the coordinator revoked it: holder node-x did not renew it" ]] ||
    fail "node-x does not know its slot was revoked: $(cat "$KUBE_DIR/held-2.json") $(cat "$KUBE_DIR/renew.err")"
[[ "$(lease_field demo-slot-0 '{.metadata.resourceVersion}')" == "$revoked_rv" ]] || fail "a node wrote the revoked Lease"
pass "the renewal of a revoked grant fails saying why"

echo "--- freed and granted to node-y (token): node-y takes it, node-x's renewal says it is not its own"
kube_admin delete lease demo-slot-0 -n $ns >/dev/null
grant node-y
"$probe" "$as_y" slot $ns node-y take demo-slot-0 >"$KUBE_DIR/held-y.json"
if "$probe" "$as_x" slot $ns node-x renew <"$KUBE_DIR/held-1.json" >"$KUBE_DIR/held-3.json" 2>"$KUBE_DIR/renew.err"; then
    fail "node-x renewed a slot granted to node-y"
fi
[[ "$(field lost <"$KUBE_DIR/held-3.json")" == "it was granted anew since (to node-y)" ]] ||
    fail "node-x does not know it lost the slot: $(cat "$KUBE_DIR/held-3.json") $(cat "$KUBE_DIR/renew.err")"
pass "node-x's renewal says the slot was granted to node-y"

echo "--- a failure and a release are said on the node's own Node"
marked=$("$probe" "$as_x" slot $ns node-x fail "containerd refused demo" <"$KUBE_DIR/held-3.json") ||
    fail "saying the failure failed"
[[ $marked == demo-slot-0 ]] || fail "the failure names '$marked'"
[[ "$(hold_field node-x failed)" == "containerd refused demo" ]] || fail "node-x's Node does not say failed: $(held_on node-x)"
"$probe" "$as_y" slot $ns node-y release <"$KUBE_DIR/held-y.json" || fail "node-y's release failed"
[[ "$(hold_field node-y done)" == True ]] || fail "node-y's Node does not say done: $(held_on node-y)"
[[ "$(lease_field demo-slot-0 '{.spec.holderIdentity}')" == node-y ]] || fail "a node changed the Lease"
pass "failed and done are annotations of the node's own Node"

echo "--- neither credential writes a Lease or another node's Node"
lease_yaml() { printf 'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: %s, namespace: %s}\nspec: {holderIdentity: %s}\n' "$@"; }
for who in x y; do
    kc=$as_x
    [[ $who == y ]] && kc=$as_y
    if out=$(lease_yaml demo-slot-1 $ns "node-$who" | kubectl --kubeconfig "$kc" create -f - 2>&1); then
        fail "node-$who created a Lease in $ns"
    fi
    [[ $out == *Forbidden* || $out == *forbidden* ]] || fail "node-$who's create was not refused as forbidden: $out"
    if out=$(kubectl --kubeconfig "$kc" -n $ns delete lease demo-slot-0 2>&1); then
        fail "node-$who deleted the grant"
    fi
    if out=$(kubectl --kubeconfig "$kc" annotate node "node-$([[ $who == x ]] && echo y || echo x)" \
        shim.containerd.x-k8s.io/held_demo='{}' --overwrite 2>&1); then
        fail "node-$who wrote another node's Node"
    fi
done
[[ "$(lease_field demo-slot-0 '{.spec.holderIdentity}')" == node-y ]] || fail "the grant changed"
pass "both credentials are refused every Lease write and the other node's Node"
echo "PASS"
