#!/usr/bin/env bash
# Which API Priority and Fairness level each of shimkeeper's requests lands on, as the real API
# server says it: every response carries the UIDs of the FlowSchema and the priority level that
# classified the request (X-Kubernetes-PF-FlowSchema-UID, X-Kubernetes-PF-PriorityLevel-UID),
# compared here with those of deploy/50-flowschema.yaml's objects:
#   - the coordinator's election (reading and renewing its Lease, by GET and merge patch) lands
#     on shimkeeper-election, a level of its own; its grants of slot Leases (create, update,
#     delete) on shimkeeper-coordinator, ahead of the built-in leader-election level; and it may
#     patch no slot Lease, which would put a grant on the election's level;
#   - a node agent's requests, with the kubelet's credential (client certificate,
#     system:node:NAME) and with a shimkeeper-node token bound to its Node: reading the Shims and
#     its slot Leases, and patching its own Node (its slot's side), land on shimkeeper-node;
#   - the same kubelet credential's own traffic (its Node's status, its Lease in kube-node-lease,
#     listing its Pods, reading its Node) stays on the built-in levels, never shimkeeper's;
#   - the coordinator's other requests (reading Shims) land on workload-high;
#   - a real `shimkeeper coordinate` leading: the API server counts its renewals
#     (apiserver_flowcontrol_dispatched_requests_total) on shimkeeper-coordinator-election, and
#     they grow with its renewals while the slot Leases' schema counts none of them.
# seconds-about: 30
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/coordinator_process.sh"
kube_require_peers
command -v jq >/dev/null || kube_skip "jq is not installed"
sk_init
kube_up "$T/kube"
ns=shimkeeper-system

# Every FlowSchema's and priority level's UID, to name what the API server's headers point at.
declare -A schema_by_uid level_by_uid
while read -r uid name; do schema_by_uid[$uid]=$name; done < <(kube_admin get flowschemas \
    -o jsonpath='{range .items[*]}{.metadata.uid} {.metadata.name}{"\n"}{end}')
while read -r uid name; do level_by_uid[$uid]=$name; done < <(kube_admin get \
    prioritylevelconfigurations -o jsonpath='{range .items[*]}{.metadata.uid} {.metadata.name}{"\n"}{end}')
for name in shimkeeper-coordinator-election shimkeeper-coordinator-leases shimkeeper-node shimkeeper; do
    [[ -n $(kube_admin get flowschema "$name" -o jsonpath='{.metadata.uid}') ]] ||
        fail "deploy/ has no FlowSchema $name"
done

# classified KUBECONFIG METHOD PATH [CURL-ARGS...]: one request as that kubeconfig's user (its
# token, token file or client certificate); prints "FLOWSCHEMA LEVEL HTTP-STATUS", the names of
# the objects whose UIDs the response's headers carry.
classified() {
    local kubeconfig=$1 method=$2 path=$3 auth headers
    shift 3
    auth=$(kube_credential_args "$kubeconfig") || fail "no credential in $kubeconfig"
    mapfile -t auth <<<"$auth"
    headers=$KUBE_DIR/headers
    curl -sS --cacert "$KUBE_CA" "${auth[@]}" -X "$method" -D "$headers" -o "$KUBE_DIR/body" \
        -w '%{http_code}' "$@" "$KUBE_SERVER$path" >"$KUBE_DIR/status"
    header() { tr -d '\r' <"$headers" | awk -v h="$1" 'tolower($1) == tolower(h) ":" { print $2 }'; }
    echo "${schema_by_uid[$(header X-Kubernetes-PF-FlowSchema-UID)]:-none}" \
        "${level_by_uid[$(header X-Kubernetes-PF-PriorityLevel-UID)]:-none}" "$(<"$KUBE_DIR/status")"
}

# lands WHAT SCHEMA LEVEL KUBECONFIG METHOD PATH [CURL-ARGS...]: the request is classified by
# SCHEMA onto LEVEL and answered 2xx.
lands() {
    local what=$1 schema=$2 level=$3 got
    shift 3
    got=$(classified "$@")
    read -r got_schema got_level status <<<"$got"
    [[ $got_schema == "$schema" && $got_level == "$level" ]] ||
        fail "$what: FlowSchema $got_schema, level $got_level (HTTP $status), not $schema and $level"
    [[ $status == 2* ]] || fail "$what: HTTP $status: $(head -c 400 "$KUBE_DIR/body")"
    echo "ok: $what: FlowSchema $schema, level $level"
}

# stays_off WHAT KUBECONFIG METHOD PATH [CURL-ARGS...]: a kubelet's own request is answered 2xx
# and classified on neither of shimkeeper's levels.
stays_off() {
    local what=$1 got
    shift
    got=$(classified "$@")
    read -r got_schema got_level status <<<"$got"
    [[ $got_level != shimkeeper-* && $got_schema != shimkeeper* ]] ||
        fail "$what: moved onto shimkeeper's FlowSchema $got_schema, level $got_level"
    [[ $got_level != none ]] || fail "$what: the response names no priority level"
    [[ $status == 2* ]] || fail "$what: HTTP $status: $(head -c 400 "$KUBE_DIR/body")"
    echo "ok: $what: FlowSchema $got_schema, level $got_level (the kubelet's, not shimkeeper's)"
}

merge=(-H 'Content-Type: application/merge-patch+json')
posted=(-H 'Content-Type: application/json')
coordinator=$KUBECONFIG_COORDINATOR
kube_create_node node-x >/dev/null
kube_create_node node-y >/dev/null
as_x=$(kube_node_cert_kubeconfig node-x)
as_y=$(kube_node_token_kubeconfig node-y)
kube_shim_yaml demo http://127.0.0.1:1/demo.tar.gz "$(printf '0%.0s' {1..64})" |
    kube_admin apply -f - >/dev/null
leases=/apis/coordination.k8s.io/v1/namespaces/$ns/leases
now() { date -u +%Y-%m-%dT%H:%M:%S.000000Z; }

echo "--- the coordinator: its election on shimkeeper-election, its grants on shimkeeper-coordinator"
lands "the coordinator creates its election Lease" shimkeeper-coordinator-leases shimkeeper-coordinator \
    "$coordinator" POST "$leases" "${posted[@]}" -d "$(jq -cn --arg now "$(now)" '{apiVersion:
        "coordination.k8s.io/v1", kind: "Lease", metadata: {name: "shimkeeper-coordinator"},
        spec: {holderIdentity: "coord-1", leaseDurationSeconds: 15, acquireTime: $now,
               renewTime: $now, leaseTransitions: 0}}')"
lands "the coordinator reads its election Lease" shimkeeper-coordinator-election shimkeeper-election \
    "$coordinator" GET "$leases/shimkeeper-coordinator"
# The renewal as kubeapi/leader_election.cpp sends it: a merge patch carrying the version read
# (renewTime to the microsecond, so that each one changes the Lease).
read_lease=$(<"$KUBE_DIR/body")
renewal() {
    jq -c --arg now "$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)" '{metadata: {resourceVersion:
        .metadata.resourceVersion}, spec: (.spec | .renewTime = $now)}' <<<"$read_lease"
}
lands "the coordinator renews its election Lease" shimkeeper-coordinator-election shimkeeper-election \
    "$coordinator" PATCH "$leases/shimkeeper-coordinator" "${merge[@]}" -d "$(renewal)"
got=$(classified "$coordinator" PATCH "$leases/shimkeeper-coordinator" "${merge[@]}" -d "$(renewal)")
[[ $got == *" 409" ]] || fail "a renewal with a version already overwritten was answered: $got"
echo "ok: a renewal carrying an old resourceVersion is refused (409), as a PUT's would be"
lands "the coordinator grants slot demo-slot-0 to node-x" shimkeeper-coordinator-leases \
    shimkeeper-coordinator "$coordinator" POST "$leases" "${posted[@]}" -d "$(jq -cn '{
        apiVersion: "coordination.k8s.io/v1", kind: "Lease",
        metadata: {name: "demo-slot-0", labels: {"shim.containerd.x-k8s.io/holder": "node-x"},
                   annotations: {"shim.containerd.x-k8s.io/shim": "demo",
                                 "shim.containerd.x-k8s.io/uid": "u-1",
                                 "shim.containerd.x-k8s.io/generation": "1"}},
        spec: {holderIdentity: "node-x", leaseDurationSeconds: 15}}')"
got=$(classified "$coordinator" PATCH "$leases/demo-slot-0" "${merge[@]}" \
    -d '{"spec": {"leaseDurationSeconds": 16}}')
[[ $got == *" 403" ]] ||
    fail "the coordinator patched slot demo-slot-0 (a grant on the election's level): $got"
echo "ok: the coordinator may not patch a slot Lease (403), so none of its grants is an election request"
lands "the coordinator frees slot demo-slot-0" shimkeeper-coordinator-leases shimkeeper-coordinator \
    "$coordinator" DELETE "$leases/demo-slot-0"
lands "the coordinator reads the Shims" shimkeeper workload-high \
    "$coordinator" GET /apis/containerd.x-k8s.io/v1alpha1/shims

# A node's side of its slot, said on its own Node (what its agent writes: slot_hold.hpp).
held='{"metadata": {"annotations": {"shim.containerd.x-k8s.io/held_demo":
    "{\"shim\": \"demo\", \"lease\": \"demo-slot-0\", \"grant\": \"u-1\"}"}}}'
for node in node-x node-y; do
    if [[ $node == node-x ]]; then
        as=$as_x how="kubelet credential"
    else
        as=$as_y how="shimkeeper-node token"
    fi
    echo "--- $node's agent ($how): on shimkeeper-node"
    lands "$node ($how) lists the Shims" shimkeeper-node shimkeeper-node \
        "$as" GET /apis/containerd.x-k8s.io/v1alpha1/shims
    lands "$node ($how) lists its slot Leases" shimkeeper-node shimkeeper-node \
        "$as" GET "$leases?labelSelector=shim.containerd.x-k8s.io%2Fholder%3D$node"
    lands "$node ($how) says on its own Node that it holds its slot" shimkeeper-node \
        shimkeeper-node "$as" PATCH "/api/v1/nodes/$node" "${merge[@]}" -d "$held"
done

echo "--- the same kubelet credential's own requests: not on shimkeeper's levels"
stays_off "node-x posts its Node status" "$as_x" PATCH /api/v1/nodes/node-x/status \
    -H 'Content-Type: application/strategic-merge-patch+json' \
    -d "$(jq -cn --arg now "$(now)" '{status: {conditions: [{type: "Ready", status: "True",
        reason: "KubeletReady", message: "test", lastHeartbeatTime: $now,
        lastTransitionTime: $now}]}}')"
stays_off "node-x reads its Node" "$as_x" GET /api/v1/nodes/node-x
stays_off "node-x lists its Pods" "$as_x" GET \
    "/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-x"
stays_off "node-x creates its Lease in kube-node-lease" "$as_x" POST \
    /apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases "${posted[@]}" \
    -d '{"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "node-x"},
         "spec": {"holderIdentity": "node-x", "leaseDurationSeconds": 40}}'
echo "--- a real coordinator's election"
# dispatched SCHEMA: requests the API server dispatched through that FlowSchema so far.
dispatched() {
    kube_admin get --raw /metrics | awk -v fs="flow_schema=\"$1\"" '
        /^apiserver_flowcontrol_dispatched_requests_total\{/ && index($0, fs) { sum += $NF }
        END { printf "%d\n", sum }'
}
kube_admin -n $ns delete lease shimkeeper-coordinator >/dev/null
coordinator_start coord-1
kube_wait_for 60 coordinator_elected || fail "coord-1 never led: $(tail -n 5 "$T/coord-1.log")"
led=$(dispatched shimkeeper-coordinator-election)
renewed() { (($(dispatched shimkeeper-coordinator-election) >= led + $1)); }
kube_wait_for 30 renewed 1 ||
    fail "coord-1's renewals are not counted on shimkeeper-coordinator-election ($led, then $(dispatched shimkeeper-coordinator-election))"
# Its term's list and watch of the Leases came before its first renewal; from here no Shim
# rolls, so only the election could send requests about Leases.
slots=$(dispatched shimkeeper-coordinator-leases)
kube_wait_for 30 renewed 3 ||
    fail "coord-1's renewals stopped being counted on shimkeeper-coordinator-election"
(($(dispatched shimkeeper-coordinator-leases) == slots)) ||
    fail "coord-1's renewals went through shimkeeper-coordinator-leases too ($slots, then $(dispatched shimkeeper-coordinator-leases))"
echo "ok: coord-1 leads; its renewals went through shimkeeper-coordinator-election," \
    "$(($(dispatched shimkeeper-coordinator-election) - led)) so far, none through the slots' schema"
echo "PASS"
