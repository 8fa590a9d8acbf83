#!/usr/bin/env bash
# Issue 7: the Kubernetes facts cluster mode is built on, checked against the real apiserver with
# deploy/ applied, both as `kubectl auth can-i` answers and as real requests:
#   - a node identity (system:node:<name>) may set shim.containerd.x-k8s.io/ labels on its own
#     Node (NodeRestriction allows the key), not on another Node, not kubernetes.io/ keys; it may
#     watch its own Node by field selector but read no other, and may not read Shims (the Node
#     authorizer knows nothing of custom resources);
#   - the agent identity may list and watch Shims, write their status, take Leases in
#     shimkeeper-system only, create RuntimeClasses, and may not create Pods; its requests are
#     classified by deploy/'s FlowSchema;
#   - the admission policy holds the agent to the shim.containerd.x-k8s.io/ labels and
#     annotations of a Node (no other label, no cordon, no taint) and to a Shim's finalizers.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
kube_require_peers
kube_up "$(mktemp -d /tmp/sk-kube.XXXXXX)"

k_label=shim.containerd.x-k8s.io/demo

pass() { echo "ok: $*"; }
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# can_i IDENTITY VERB RESOURCE [ARGS...]: the first word of `auth can-i`'s answer, "yes" or "no"
# (a "no" may go on with the authorizer's reason).
can_i() {
    local identity=$1 answer
    shift
    answer=$(kube_as "$identity" auth can-i "$@" 2>/dev/null) || true
    answer=${answer%%$'\n'*}
    echo "${answer%% *}"
}
can() {
    [[ $(can_i "$@") == yes ]] || fail "$1 cannot ${*:2} (auth can-i did not say yes)"
    pass "$1 can ${*:2}"
}
cannot() {
    [[ $(can_i "$@") == no ]] || fail "$1 can ${*:2} (auth can-i did not say no)"
    pass "$1 cannot ${*:2}"
}

# allowed IDENTITY WHAT KUBECTL-ARGS...: the real request succeeds.
allowed() {
    local identity=$1 what=$2 out
    shift 2
    out=$(kube_as "$identity" "$@" 2>&1) || fail "$identity: $what was refused: $out"
    pass "$identity: $what"
}
# refused IDENTITY WHAT EXPECTED KUBECTL-ARGS...: the real request fails saying EXPECTED.
refused() {
    local identity=$1 what=$2 expected=$3 out
    shift 3
    if out=$(kube_as "$identity" "$@" 2>&1); then
        fail "$identity: $what was allowed"
    fi
    grep -qF -- "$expected" <<<"$out" || fail "$identity: $what failed without \"$expected\": $out"
    pass "$identity: $what is refused: ${out//$'\n'/ }"
}

label_of() {
    kube_admin get node "$1" -o "go-template={{index .metadata.labels \"$2\"}}"
}

kube_create_node node-a wasm=true
kube_create_node node-b wasm=true

echo "--- a node identity and NodeRestriction"
can node-a patch nodes/node-a
allowed node-a "label its own Node $k_label=true" label node node-a "$k_label=true"
[[ $(label_of node-a "$k_label") == true ]] || fail "node-a does not carry $k_label=true"
allowed node-a "annotate its own Node" annotate node node-a "$k_label={\"state\":\"installed\"}"
# A raw PATCH, not `kubectl label`: kubectl reads the Node first, which the Node authorizer
# refuses for another node's object, so NodeRestriction would never be asked.
response=$(kube_curl node-a PATCH /api/v1/nodes/node-b \
    -H 'Content-Type: application/merge-patch+json' \
    -d "{\"metadata\": {\"labels\": {\"$k_label\": \"true\"}}}")
[[ $(tail -n 1 <<<"$response") == 403 ]] || fail "node-a patching node-b got: $response"
grep -qF 'is not allowed to modify node' <<<"$response" ||
    fail "node-a patching node-b was refused, but not by NodeRestriction: $response"
pass "node-a: patch another Node is refused by NodeRestriction (403)"
[[ $(label_of node-b "$k_label") == "<no value>" ]] || fail "node-a's label reached node-b"
refused node-a "set a kubernetes.io label on itself" "is not allowed to modify labels" \
    label node node-a node-role.kubernetes.io/worker=true
# The node worker's watch of its own Node, as the design has it, is what the Node authorizer
# allows: by field selector on its name; not all Nodes, not another Node.
watch=$(kube_as node-a get --raw \
    '/api/v1/nodes?fieldSelector=metadata.name%3Dnode-a&watch=true&timeoutSeconds=1') ||
    fail "node-a cannot watch its own Node by field selector"
grep -q '"type":"ADDED","object":{"kind":"Node"' <<<"$watch" ||
    fail "node-a's watch of its own Node did not deliver it: ${watch:0:300}"
pass "node-a: watch its own Node by field selector"
refused node-a "list all Nodes" "only its own Node object" get nodes
refused node-a "read another Node" "only its own Node object" get node node-b
cannot node-a list shims.containerd.x-k8s.io
refused node-a "list Shims" "Forbidden" get shims
cannot node-a create leases.coordination.k8s.io -n shimkeeper-system

echo "--- the agent identity and deploy/'s RBAC"
can agent list shims.containerd.x-k8s.io
can agent watch shims.containerd.x-k8s.io
can agent patch shims.containerd.x-k8s.io --subresource status
allowed agent "list Shims" get shims
# A real watch: the server ends it after a second, answering 200 with the (empty) event stream.
allowed agent "watch Shims" get --raw \
    '/apis/containerd.x-k8s.io/v1alpha1/shims?watch=true&timeoutSeconds=1'
can agent create leases.coordination.k8s.io -n shimkeeper-system
cannot agent create leases.coordination.k8s.io -n default
cannot agent create leases.coordination.k8s.io -n kube-node-lease
lease() {
    printf 'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: demo-slot-0, namespace: %s}\nspec: {holderIdentity: node-a, leaseDurationSeconds: 15}\n' "$1"
}
allowed agent "create a slot Lease in shimkeeper-system" create -f <(lease shimkeeper-system)
allowed agent "delete its slot Lease" -n shimkeeper-system delete lease demo-slot-0
refused agent "create a Lease in default" "Forbidden" create -f <(lease default)
refused agent "create a Lease in kube-node-lease" "Forbidden" create -f <(lease kube-node-lease)
cannot agent create pods -n default
refused agent "create a Pod" "Forbidden" -n default run probe --image=registry.invalid/probe:1 \
    --restart=Never
can agent create runtimeclasses.node.k8s.io
allowed agent "create a RuntimeClass" create -f - <<'YAML'
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: wasmtime-demo}
handler: demo
scheduling: {nodeSelector: {shim.containerd.x-k8s.io/demo: "true"}}
YAML
can agent create events -n default
can agent create events.events.k8s.io -n default
cannot agent delete nodes/node-b
cannot agent create nodes

# API Priority and Fairness names the FlowSchema that classified a request in a response header.
headers=$KUBE_DIR/agent-headers
kube_curl agent GET /apis/containerd.x-k8s.io/v1alpha1/shims -D "$headers" -o /dev/null >/dev/null
flow_uid=$(kube_admin get flowschema shimkeeper-agent -o jsonpath='{.metadata.uid}')
grep -qi "^X-Kubernetes-PF-FlowSchema-UID: $flow_uid" "$headers" ||
    fail "the agent's request was not classified by FlowSchema shimkeeper-agent ($flow_uid): $(cat "$headers")"
pass "agent: its requests are classified by FlowSchema shimkeeper-agent (workload-high)"

echo "--- the admission policy on Nodes and Shims"
# The apiserver compiles a new ValidatingAdmissionPolicy and starts enforcing it a moment after
# it is created: wait until a server-side dry run of a forbidden change is refused.
policy_enforced() {
    ! kube_as agent label node node-b probe=1 --dry-run=server >/dev/null 2>&1
}
kube_wait_for 60 policy_enforced || fail "the agent's Node policy never started refusing"
allowed agent "label a Node $k_label=true" label node node-b "$k_label=true"
[[ $(label_of node-b "$k_label") == true ]] || fail "node-b does not carry $k_label=true"
allowed agent "annotate a Node with its shim state" annotate --overwrite node node-b \
    "$k_label={\"state\":\"installed\",\"generation\":1}"
allowed agent "remove the shim label" label node node-b "$k_label-"
k_policy_msg="shimkeeper's agent may change only"
refused agent "set another label" "$k_policy_msg the labels" label --overwrite node node-b wasm=false
[[ $(label_of node-b wasm) == true ]] || fail "the agent changed node-b's wasm label"
refused agent "remove another label" "$k_policy_msg the labels" label node node-b wasm-
refused agent "set another annotation" "$k_policy_msg the annotations" \
    annotate node node-b example.org/owner=agent
# The request `kubectl cordon` makes; cordon itself exits 0 even when the server refuses it.
refused agent "cordon a Node (spec.unschedulable)" "may not change a Node's spec" \
    patch node node-b --type merge -p '{"spec": {"unschedulable": true}}'
[[ $(kube_admin get node node-b -o jsonpath='{.spec.unschedulable}') != true ]] ||
    fail "node-b was cordoned"
refused agent "taint a Node" "may not change a Node's spec" taint node node-b demo=x:NoSchedule
# The policy binds the agent only: the admin and the node itself are not held by it.
allowed admin "cordon a Node" patch node node-b --type merge -p '{"spec": {"unschedulable": true}}'

shim() {
    cat <<'YAML'
apiVersion: containerd.x-k8s.io/v1alpha1
kind: Shim
metadata: {name: demo}
spec:
  runtimeType: io.containerd.demo.v2
  fetchStrategy:
    type: anonymousHttp
    anonHttp:
      location: https://artifacts.example.org/demo.tar.gz
      sha256: 0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
YAML
}
kube_admin apply -f <(shim) >/dev/null
shim_policy_enforced() {
    ! kube_as agent label shim demo probe=1 --dry-run=server >/dev/null 2>&1
}
kube_wait_for 60 shim_policy_enforced || fail "the agent's Shim policy never started refusing"
allowed agent "add its finalizer to a Shim" patch shim demo --type merge \
    -p '{"metadata": {"finalizers": ["containerd.x-k8s.io/cleanup"]}}'
refused agent "change a Shim's spec" "may change only the finalizers of a Shim" \
    patch shim demo --type merge -p '{"spec": {"handler": "other"}}'
allowed agent "write a Shim's status" patch shim demo --subresource status --type merge \
    -p '{"status": {"observedGeneration": 1, "nodes": {"selected": 2}}}'
[[ $(kube_admin get shim demo -o jsonpath='{.status.nodes.selected}') == 2 ]] ||
    fail "the agent's status write did not land"
