#!/usr/bin/env bash
# deploy/'s RBAC and ValidatingAdmissionPolicies, attacked through the real kube-apiserver
# (Node,RBAC authorization, NodeRestriction on). A node's credential must change nothing but its own
# Node's shim keys (its readiness labels, its reports, its slot requests and its side of a rollout
# slot, shim.containerd.x-k8s.io/held_<shim>) and Events about itself or a Shim: it writes no Lease
# in shimkeeper-system at all, it only reads (gets, lists, watches) the slot Leases there. The
# coordinator changes nothing but Shim finalizers and status, shimkeeper's own RuntimeClasses, its
# election Lease and the rollout slot Leases: it grants a slot by creating its Lease for a node
# (labelled with it), updates one only keeping its holder (a revoke, a failure mark; never a
# hand-over), and may delete any Lease there. Every attack below is made as a node-bound token of
# ServiceAccount shimkeeper-node for node-a and again as node-a's kubelet-style identity
# (system:node:node-a), and must be refused: a 403 whose message says who refused it (RBAC, the
# Node authorizer, NodeRestriction or our policy), with the object unchanged afterwards. A node's
# Lease writes are refused by RBAC (its Role grants only reads); with a temporary Role that allows
# them, admission still refuses them (NodeRestriction a kubelet, policy shimkeeper-node-no-leases
# the ServiceAccount). Then what each identity must still do succeeds. One control plane, no
# agents: only the API server decides here, until the last part, where a coordinator runs and a
# node labels itself ready for a Shim that does not select it (with a token bound to node-a and
# with node-a's kubelet-style client certificate): the RuntimeClass must not select it, and
# neither its slot requests nor its failures (said on its own Node) may count for that Shim; and
# neither credential of a node may create a slot Lease, however long its leaseDurationSeconds.
# seconds-about: 125
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_coordinator.sh" # pass, fail, coord_*
kube_require_peers
command -v jq >/dev/null || fail "jq is not installed (scripts/install-deps installs it)"
kube_up "$(mktemp -d /tmp/sk-kube.XXXXXX)"

# state OBJECT: OBJECT ([NAMESPACE/]RESOURCE/NAME) as the admin sees it: its resourceVersion,
# or "absent" ("-": no object, for a read). A refused write must leave it as it was.
state() {
    local object=$1 args=()
    [[ $object != - ]] || return 0
    if [[ $object == */*/* ]]; then
        args=(-n "${object%%/*}")
        object=${object#*/}
    fi
    kube_admin get "${args[@]}" "$object" -o jsonpath='{.metadata.resourceVersion}' 2>/dev/null ||
        echo absent
}

one_line() {
    local text=${1//$'\n'/ }
    echo "${text:0:240}"
}

# refused IDENTITY WHAT OBJECT EXPECTED KUBECTL-ARGS...: kubectl fails with the server's 403
# (Forbidden), its message holds EXPECTED, and OBJECT did not change. The message is kept in
# refusal, for a check of what it must not say.
refusal=""
refused() {
    local identity=$1 what=$2 object=$3 expected=$4 before out
    shift 4
    before=$(state "$object")
    if out=$(kube_as "$identity" "$@" 2>&1); then
        fail "$identity: $what was allowed: $out"
    fi
    grep -qF 'Error from server (Forbidden)' <<<"$out" ||
        fail "$identity: $what failed, but not with a 403 from the server: $out"
    grep -qF -- "$expected" <<<"$out" || fail "$identity: $what was refused without \"$expected\": $out"
    [[ $(state "$object") == "$before" ]] || fail "$identity: $what changed $object"
    refusal=$out
    pass "$identity: $what is refused: $(one_line "$out")"
}

# refused_raw IDENTITY WHAT OBJECT EXPECTED METHOD PATH [CURL-ARGS...]: the same with one raw
# request, for what kubectl would precede with a GET the identity may not make.
refused_raw() {
    local identity=$1 what=$2 object=$3 expected=$4 before out message
    shift 4
    before=$(state "$object")
    out=$(kube_curl "$identity" "$@")
    [[ $(tail -n 1 <<<"$out") == 403 ]] || fail "$identity: $what was not refused with 403: $out"
    message=$(sed '$d' <<<"$out" | jq -r .message)
    grep -qF -- "$expected" <<<"$message" ||
        fail "$identity: $what was refused without \"$expected\": $message"
    [[ $(state "$object") == "$before" ]] || fail "$identity: $what changed $object"
    refusal=$message
    pass "$identity: $what is refused (403): $(one_line "$message")"
}

# refused_patch IDENTITY WHAT OBJECT EXPECTED API-PATH MERGE-PATCH, refused_delete IDENTITY WHAT
# OBJECT EXPECTED API-PATH: one raw PATCH or DELETE refused (kubectl patch and delete GET first).
refused_patch() {
    refused_raw "$1" "$2" "$3" "$4" PATCH "$5" -H 'Content-Type: application/merge-patch+json' -d "$6"
}
refused_delete() {
    refused_raw "$1" "$2" "$3" "$4" DELETE "$5"
}
refused_node_patch() { # IDENTITY WHAT NODE EXPECTED MERGE-PATCH
    refused_patch "$1" "$2" "node/$3" "$4" "/api/v1/nodes/$3" "$5"
}

# allowed IDENTITY WHAT KUBECTL-ARGS...: the request succeeds.
allowed() {
    local identity=$1 what=$2 out
    shift 2
    out=$(kube_as "$identity" "$@" 2>&1) || fail "$identity: $what was refused: $out"
    pass "$identity: $what"
}

lease() { # NAME HOLDER [LABELS]
    cat <<YAML
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: $1, namespace: shimkeeper-system, labels: ${3:-{\}}}
spec: {holderIdentity: "$2", leaseDurationSeconds: 15}
YAML
}

now() { date -u +%Y-%m-%dT%H:%M:%S.000000Z; }

# lease_refusal IDENTITY VERB: how the API server refuses a node identity's Lease write in
# shimkeeper-system. Authorization refuses it before admission is asked: RBAC grants node
# identities only get, list and watch there (Role shimkeeper-node-leases); for a kubelet identity
# the Node authorizer's reason (no opinion outside kube-node-lease) comes with it.
lease_refusal() {
    local message="cannot $2 resource \"leases\" in API group \"coordination.k8s.io\" in the namespace \"shimkeeper-system\""
    [[ $1 == *-bound || $1 == unbound ]] ||
        message+=': can only access leases in the "kube-node-lease" system namespace'
    echo "$message"
}

# edited LEASE JQ-FILTER: a file holding Lease LEASE of shimkeeper-system as the admin reads it
# now (its resourceVersion with it), changed by JQ-FILTER: for an update (kubectl replace, a PUT),
# what the coordinator may do to a slot Lease where RBAC grants it no patch.
edited() {
    local file
    file=$(mktemp "$KUBE_DIR/lease-XXXXXX.json")
    kube_admin -n shimkeeper-system get lease "$1" -o json | jq "$2" >"$file" || return 1
    echo "$file"
}

# held SHIM LEASE [FAILED]: the entry a node writes on its own Node, in annotation
# shim.containerd.x-k8s.io/held_SHIM, for its grant LEASE of Shim SHIM (slot_hold.hpp), naming the
# grant's uid and the Shim's uid and generation as the admin reads them; FAILED: the reason.
held() {
    local grant uid generation
    grant=$(kube_admin -n shimkeeper-system get lease "$2" -o jsonpath='{.metadata.uid}') || return 1
    uid=$(kube_admin get shim "$1" -o jsonpath='{.metadata.uid}') || return 1
    generation=$(kube_admin get shim "$1" -o jsonpath='{.metadata.generation}') || return 1
    jq -cn --arg shim "$1" --arg lease "$2" --arg grant "$grant" --arg uid "$uid" \
        --argjson generation "$generation" --arg renewed "$(now)" --arg failed "${3:-}" '
        {shim: $shim, lease: $lease, grant: $grant, uid: $uid, generation: $generation,
         renewed: $renewed} + (if $failed == "" then {} else {failed: $failed} end)'
}

# event NAME NAMESPACE REGARDING [RELATED]: an events.k8s.io/v1 Event as the agent writes it;
# REGARDING and RELATED are flow mappings ({apiVersion: v1, kind: Node, name: node-a}). The
# reporting node is node-a unless EVENT_INSTANCE says another.
event() {
    cat <<YAML
apiVersion: events.k8s.io/v1
kind: Event
metadata: {name: $1, namespace: $2}
eventTime: "$(now)"
reportingController: shimkeeper.containerd.x-k8s.io/agent
reportingInstance: ${EVENT_INSTANCE:-shimkeeper-node-a}
action: Install
reason: Installed
type: Normal
note: probe
regarding: $3
${4:+related: $4}
YAML
}

# core_event NAME NAMESPACE INVOLVED: the same through the core/v1 API.
core_event() {
    cat <<YAML
apiVersion: v1
kind: Event
metadata: {name: $1, namespace: $2}
involvedObject: $3
reason: Installed
message: probe
type: Normal
source: {component: shimkeeper}
YAML
}

runtime_class() { # NAME [LABELS-FLOW-MAPPING]
    local labels=${2:-"{}"}
    cat <<YAML
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: $1, labels: $labels}
handler: demo
YAML
}

# managed_rc NAME [JQ-FILTER]: a RuntimeClass shaped as the coordinator makes one for Shim demo
# (handler demo), as JSON, changed by JQ-FILTER.
managed_rc() {
    jq -n --arg name "$1" '{
        apiVersion: "node.k8s.io/v1", kind: "RuntimeClass",
        metadata: {name: $name, labels: {"app.kubernetes.io/managed-by": "shimkeeper"},
                   annotations: {"containerd.x-k8s.io/shim": "demo"},
                   ownerReferences: [{apiVersion: "containerd.x-k8s.io/v1alpha1", kind: "Shim",
                                      name: "demo", uid: "00000000-0000-0000-0000-00000000d3e0",
                                      controller: true}]},
        handler: "demo",
        scheduling: {nodeSelector: {"shim.containerd.x-k8s.io/demo": "demo", wasm: "true"}}
    } | '"${2:-.}"
}

k_shim_label=shim.containerd.x-k8s.io/x
rc_path=/apis/node.k8s.io/v1/runtimeclasses
shim_path=/apis/containerd.x-k8s.io/v1alpha1/shims/demo
lease_path=/apis/coordination.k8s.io/v1/namespaces/shimkeeper-system/leases
k_marker='{app.kubernetes.io/managed-by: shimkeeper}'
node_a='{apiVersion: v1, kind: Node, name: node-a}'
node_b='{apiVersion: v1, kind: Node, name: node-b}'
shim_ref='{apiVersion: containerd.x-k8s.io/v1alpha1, kind: Shim, name: demo}'

echo "--- setup (admin)"
kube_create_node node-a wasm=true
kube_create_node node-b wasm=true
kube_node_token_kubeconfig node-a >/dev/null
kube_node_token_kubeconfig node-b >/dev/null
kube_token_kubeconfig unbound \
    "$(kube_admin -n shimkeeper-system create token shimkeeper-node --duration 1h)" >/dev/null
[[ $(stat -c %a "$KUBE_DIR/tokens/node-a") == 600 ]] || fail "the node-a token file is not 0600"
extra=$(kube_as node-a-bound auth whoami -o json)
[[ $(jq -r '.status.userInfo.username' <<<"$extra") == \
    system:serviceaccount:shimkeeper-system:shimkeeper-node &&
    $(jq -r '.status.userInfo.extra["authentication.kubernetes.io/node-name"] | join(",")' \
        <<<"$extra") == node-a ]] ||
    fail "the bound token does not carry node-name node-a: $extra"
pass "node-a-bound: a shimkeeper-node token whose user extra authentication.kubernetes.io/node-name is [node-a]"
[[ $(kube_as unbound auth whoami -o json |
    jq -r '.status.userInfo.extra["authentication.kubernetes.io/node-name"] // [] | length') == 0 ]] ||
    fail "the unbound token carries a node name"
pass "unbound: a shimkeeper-node token without a node name"

kube_shim_yaml demo https://artifacts.example.org/demo.tar.gz \
    0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef | kube_admin apply -f - >/dev/null
kube_admin patch shim demo --type merge \
    -p '{"metadata": {"finalizers": ["example.org/protect"]}}' >/dev/null
kube_admin create -f <(runtime_class foreign) >/dev/null
# Slots as the coordinator grants them (the admin plays it here: a grant is a Lease held by the
# node and labelled with it): x-slot-1 to node-b, x-slot-2 to node-a; and x-foreign, a Lease in
# shimkeeper-system that is neither a slot nor the coordinator's.
kube_admin create -f <(lease x-slot-1 node-b '{shim.containerd.x-k8s.io/holder: node-b}') >/dev/null
kube_admin create -f <(lease x-slot-2 node-a '{shim.containerd.x-k8s.io/holder: node-a}') >/dev/null
kube_admin create -f <(lease x-foreign someone) >/dev/null
# node-b's token reads its grant (which shows that token works, too).
allowed node-b-bound "read its grant x-slot-1" -n shimkeeper-system get lease x-slot-1

# A ValidatingAdmissionPolicy is enforced a moment after it is created. Each probe below is
# allowed by RBAC, so only its policy can refuse it (a server-side dry run writes nothing). A
# node's Lease write is no probe: RBAC refuses it (policy shimkeeper-node-no-leases is awaited
# below, where a temporary Role allows node identities to write Leases).
probe_refused() {
    ! kube_as "$@" --dry-run=server >/dev/null 2>&1
}
lease probe-slot-0 node-b >"$KUBE_DIR/probe-lease.yaml"
event probe default "$node_b" >"$KUBE_DIR/probe-event.yaml"
runtime_class probe >"$KUBE_DIR/probe-rc.yaml"
for probe in \
    "node-a-bound label node node-b $k_shim_label=probe" \
    "node-a-bound create -f $KUBE_DIR/probe-event.yaml" \
    "coordinator label shim demo probe=1" \
    "coordinator create -f $KUBE_DIR/probe-rc.yaml" \
    "coordinator create -f $KUBE_DIR/probe-lease.yaml"; do
    # shellcheck disable=SC2086 # the probe is a word list
    kube_wait_for 60 probe_refused $probe || fail "no policy started refusing: $probe"
done
pass "every policy is enforced"

echo "--- a node's attacks, as node-a's bound token and as node-a's kubelet identity"
for who in node-a-bound node-a; do
    if [[ $who == node-a-bound ]]; then
        # Our policy refuses; the message is deploy/40-admission-policies.yaml's.
        m_node="may only patch its own Node"
    else
        # NodeRestriction refuses before our policies are asked.
        m_node="is not allowed to modify node \"node-b\""
    fi
    m_forbidden="cannot"
    # Raw PATCHes: for the kubelet identity kubectl would first GET node-b, which the Node
    # authorizer refuses before admission is ever asked.
    refused_node_patch "$who" "label node-b $k_shim_label" node-b "$m_node" \
        "{\"metadata\": {\"labels\": {\"$k_shim_label\": \"true\"}}}"
    refused_node_patch "$who" "annotate node-b $k_shim_label" node-b "$m_node" \
        "{\"metadata\": {\"annotations\": {\"$k_shim_label\": \"{}\"}}}"
    refused_node_patch "$who" "say on node-b that it holds x-slot-1 (held_demo)" node-b "$m_node" \
        "$(jq -cn --arg held "$(held demo x-slot-1)" \
            '{metadata: {annotations: {"shim.containerd.x-k8s.io/held_demo": $held}}}')"

    refused "$who" "create a RuntimeClass (even a marked one)" runtimeclass/stolen \
        "$m_forbidden create resource \"runtimeclasses\"" \
        create -f <(runtime_class stolen "$k_marker")
    refused_patch "$who" "patch a RuntimeClass" runtimeclass/foreign \
        "$m_forbidden patch resource \"runtimeclasses\"" "$rc_path/foreign" \
        '{"metadata": {"labels": {"x": "y"}}}'
    refused_delete "$who" "delete a RuntimeClass" runtimeclass/foreign \
        "$m_forbidden delete resource \"runtimeclasses\"" "$rc_path/foreign"

    # No Lease in shimkeeper-system, whoever it names and however long its lease: a node takes,
    # renews, fails and releases a slot on its own Node (held_<shim>), the Leases are the
    # coordinator's.
    refused "$who" "create slot x-slot-0 held by itself" shimkeeper-system/lease/x-slot-0 \
        "$(lease_refusal "$who" create)" \
        create -f <(lease x-slot-0 node-a '{shim.containerd.x-k8s.io/holder: node-a}')
    refused "$who" "create slot x-slot-0 held by node-b" shimkeeper-system/lease/x-slot-0 \
        "$(lease_refusal "$who" create)" create -f <(lease x-slot-0 node-b)
    refused "$who" "create slot x-slot-0 held by itself with leaseDurationSeconds 2147483647" \
        shimkeeper-system/lease/x-slot-0 "$(lease_refusal "$who" create)" create -f <(lease x-slot-0 \
        node-a | sed 's/leaseDurationSeconds: 15/leaseDurationSeconds: 2147483647/')
    refused "$who" "create x-other, a Lease that is no slot" shimkeeper-system/lease/x-other \
        "$(lease_refusal "$who" create)" create -f <(lease x-other node-a)
    refused "$who" "create the coordinator Lease" shimkeeper-system/lease/shimkeeper-coordinator \
        "$(lease_refusal "$who" create)" create -f <(lease shimkeeper-coordinator node-a)
    for slot in x-slot-2 x-slot-1; do
        [[ $slot == x-slot-2 ]] && whose="its grant" || whose="node-b's slot"
        object=shimkeeper-system/lease/$slot
        refused "$who" "update $whose $slot (renew, a PUT)" "$object" \
            "$(lease_refusal "$who" update)" \
            replace -f "$(edited "$slot" ".spec.renewTime = \"$(now)\"")"
        refused_patch "$who" "renew $whose $slot (a patch)" "$object" \
            "$(lease_refusal "$who" patch)" "$lease_path/$slot" "{\"spec\": {\"renewTime\": \"$(now)\"}}"
        refused_patch "$who" "mark $whose $slot failed" "$object" "$(lease_refusal "$who" patch)" \
            "$lease_path/$slot" '{"metadata": {"annotations": {"shim.containerd.x-k8s.io/failed": "x"}}}'
        refused_patch "$who" "take over $whose $slot (holderIdentity node-a)" "$object" \
            "$(lease_refusal "$who" patch)" "$lease_path/$slot" \
            '{"spec": {"holderIdentity": "node-a"}, "metadata": {"labels": {"shim.containerd.x-k8s.io/holder": "node-a"}}}'
        refused_delete "$who" "release $whose $slot (delete)" "$object" \
            "$(lease_refusal "$who" delete)" "$lease_path/$slot"
    done
    refused_delete "$who" "delete x-foreign, a Lease that is no slot" \
        shimkeeper-system/lease/x-foreign "$(lease_refusal "$who" delete)" "$lease_path/x-foreign"

    refused_patch "$who" "write a Shim's status" shim/demo \
        "$m_forbidden patch resource \"shims/status\"" "$shim_path/status" \
        '{"status": {"observedGeneration": 9}}'
    refused_patch "$who" "add an ownerReference to a Shim" shim/demo \
        "$m_forbidden patch resource \"shims\"" "$shim_path" \
        '{"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node-a",
          "uid": "00000000-0000-0000-0000-000000000001"}]}}'
    refused_patch "$who" "remove a Shim's finalizers" shim/demo \
        "$m_forbidden patch resource \"shims\"" "$shim_path" '{"metadata": {"finalizers": null}}'
    refused_patch "$who" "change a Shim's spec" shim/demo \
        "$m_forbidden patch resource \"shims\"" "$shim_path" '{"spec": {"handler": "runc"}}'

    # Both Event APIs, and related as well as the subject.
    refused "$who" "an Event in default about node-b" "default/events.events.k8s.io/$who-b" \
        "may not write Events about another Node" create -f <(event "$who-b" default "$node_b")
    refused "$who" "a core/v1 Event in default about node-b" "default/events/$who-core-b" \
        "may not write Events about another Node" \
        create -f <(core_event "$who-core-b" default "{kind: Node, name: node-b}")
    refused "$who" "an Event about node-a related to node-b" "default/events.events.k8s.io/$who-rel" \
        "may not write Events about another Node" create -f <(event "$who-rel" default "$node_a" "$node_b")
    # The coordinator names the node a NodeWriteRefused Event is from by its reportingInstance.
    refused "$who" "an Event about a Shim as node-b" "default/events.events.k8s.io/$who-as-b" \
        "may write Events about a Shim only as reportingInstance shimkeeper-node-a" \
        create -f <(EVENT_INSTANCE=shimkeeper-node-b event "$who-as-b" default "$shim_ref")

    refused "$who" "list Secrets" - \
        "$m_forbidden list resource \"secrets\"" get secrets -A
done

# What only the ServiceAccount kind is denied: to the kubelet kind these are kubelet rights that
# deploy/ must not take away (NodeRestriction allows a kubelet any non-reserved label on its own
# Node; the Node authorizer lets it create Events in every namespace).
refused node-a-bound "a non-shim label on node-a" node/node-a \
    "may change only the labels under shim.containerd.x-k8s.io/" label node node-a example.org/role=x
refused node-a-bound "a non-shim annotation on node-a" node/node-a \
    "may change only the annotations under shim.containerd.x-k8s.io/" \
    annotate node node-a example.org/owner=x
refused node-a-bound "cordon node-a (spec.unschedulable)" node/node-a "may not change a Node's spec" \
    patch node node-a --type merge -p '{"spec": {"unschedulable": true}}'
refused node-a-bound "an Event in kube-system" kube-system/events.events.k8s.io/sa-ks \
    "cannot create resource \"events\"" create -f <(event sa-ks kube-system "$node_a")
refused node-a-bound "an Event about a Secret" default/events.events.k8s.io/sa-secret \
    "may write Events only about its own Node or about a Shim" \
    create -f <(event sa-secret default '{apiVersion: v1, kind: Secret, name: x, namespace: default}')
allowed node-a "set a non-shim label on its own Node (a kubelet right NodeRestriction allows)" \
    label node node-a example.org/role=x
kube_admin label node node-a example.org/role- >/dev/null
allowed node-a "create an Event in kube-system (a kubelet right the Node authorizer grants)" \
    create -f <(event kubelet-ks kube-system "$node_a")

echo "--- a token of shimkeeper-node not bound to a Node writes nothing"
refused_node_patch unbound "patch node-a's shim label" node-a "not bound to a Node" \
    "{\"metadata\": {\"labels\": {\"$k_shim_label\": \"true\"}}}"
refused_node_patch unbound "patch node-b's shim label" node-b "not bound to a Node" \
    "{\"metadata\": {\"labels\": {\"$k_shim_label\": \"true\"}}}"
refused unbound "create a slot Lease" shimkeeper-system/lease/x-slot-0 \
    "$(lease_refusal unbound create)" create -f <(lease x-slot-0 "")
refused unbound "create a slot Lease held by node-a" shimkeeper-system/lease/x-slot-0 \
    "$(lease_refusal unbound create)" create -f <(lease x-slot-0 node-a)
refused unbound "an Event about a Shim" default/events.events.k8s.io/unbound-shim \
    "only with a token bound to a Node" create -f <(event unbound-shim default "$shim_ref")
allowed unbound "read Shims (reads stay allowed)" get shims

echo "--- what a node must still do"
allowed node-a-bound "read Shims" get shims
allowed node-a-bound "watch Shims" get --raw \
    '/apis/containerd.x-k8s.io/v1alpha1/shims?watch=true&timeoutSeconds=1'
allowed node-a-bound "read its own Node" get node node-a
allowed node-a-bound "label its own Node $k_shim_label=true" label node node-a "$k_shim_label=true"
allowed node-a-bound "annotate its own Node $k_shim_label" annotate node node-a \
    "$k_shim_label={\"state\":\"installed\"}"
[[ $(kube_admin get node node-a -o "go-template={{index .metadata.labels \"$k_shim_label\"}}") == true ]] ||
    fail "node-a's label did not land"
# A node reads the slot Leases (an agent watches those granted to it) and says its side of a
# slot on its own Node.
allowed node-a-bound "read the slot Leases in shimkeeper-system" -n shimkeeper-system get leases
allowed node-a-bound "watch the slot Leases granted to it" get --raw \
    "$lease_path?watch=true&timeoutSeconds=1&labelSelector=shim.containerd.x-k8s.io%2Fholder%3Dnode-a"
allowed node-a-bound "say on its own Node that it holds x-slot-2 (held_demo)" \
    annotate --overwrite node node-a "shim.containerd.x-k8s.io/held_demo=$(held demo x-slot-2)"
[[ $(kube_admin get node node-a -o jsonpath='{.metadata.annotations.shim\.containerd\.x-k8s\.io/held_demo}' |
    jq -r .lease) == x-slot-2 ]] || fail "node-a's held_demo did not land"
allowed node-a-bound "an Event about its own Node (events.k8s.io/v1)" \
    create -f <(event sa-own default "$node_a")
allowed node-a-bound "an Event about a Shim (events.k8s.io/v1)" \
    create -f <(event sa-shim default "$shim_ref" "$node_a")
allowed node-a-bound "an Event about its own Node (core/v1)" \
    create -f <(core_event sa-core-own default "{apiVersion: v1, kind: Node, name: node-a}")
# Raw: kubectl patch would GET first, and the agent never reads Events.
out=$(kube_curl node-a-bound PATCH /apis/events.k8s.io/v1/namespaces/default/events/sa-own \
    -H 'Content-Type: application/merge-patch+json' -d "{\"series\": {\"count\": 2, \"lastObservedTime\": \"$(now)\"}}")
[[ $(tail -n 1 <<<"$out") == 200 ]] || fail "node-a-bound: patching its own Event got: $out"
pass "node-a-bound: patch its own Event (series)"

allowed node-a "read Shims" get shims
allowed node-a "label its own Node $k_shim_label=false" label --overwrite node node-a "$k_shim_label=false"
allowed node-a "an Event about its own Node" create -f <(event kubelet-own default "$node_a")
allowed node-a "read the slot Leases in shimkeeper-system" -n shimkeeper-system get leases
allowed node-a "watch the slot Leases granted to it" get --raw \
    "$lease_path?watch=true&timeoutSeconds=1&labelSelector=shim.containerd.x-k8s.io%2Fholder%3Dnode-a"
allowed node-a "say on its own Node that it failed x-slot-2 (held_demo)" annotate --overwrite node \
    node-a "shim.containerd.x-k8s.io/held_demo=$(held demo x-slot-2 "containerd did not start")"
[[ $(kube_admin get node node-a -o jsonpath='{.metadata.annotations.shim\.containerd\.x-k8s\.io/held_demo}' |
    jq -r .failed) == "containerd did not start" ]] || fail "node-a's failed held_demo did not land"
# Gone before a coordinator runs below, which would record that failure on x-slot-2.
kube_admin annotate node node-a shim.containerd.x-k8s.io/held_demo- >/dev/null

echo "--- a node identity writes no Lease in shimkeeper-system even where RBAC would allow it"
# Above, authorization refused every Lease write of a node identity (its Role grants reads only)
# before admission was asked. Should a wider Role ever be bound to them, admission still refuses:
# NodeRestriction a kubelet every Lease outside kube-node-lease, policy shimkeeper-node-no-leases
# the ServiceAccount (any of its tokens) and, behind NodeRestriction, a kubelet too. Shown with a
# temporary Role of our own that lets both kinds, and every shimkeeper-node token, write Leases here.
kube_admin -n shimkeeper-system create role probe-lease-writer \
    --verb create,update,patch,delete --resource leases.coordination.k8s.io >/dev/null
kube_admin -n shimkeeper-system create rolebinding probe-lease-writer --role probe-lease-writer \
    --user system:node:node-a --serviceaccount shimkeeper-system:shimkeeper-node >/dev/null
for who in node-a node-a-bound unbound; do
    kube_wait_for 30 kube_as "$who" auth can-i create leases.coordination.k8s.io -n shimkeeper-system ||
        fail "$who: the probe RoleBinding never took effect"
done
# RBAC allows the probe now, so only the policy can refuse it (it came with deploy/ a while ago;
# this makes sure it is enforced).
lease probe-slot-0 node-a >"$KUBE_DIR/probe-lease-own.yaml"
kube_wait_for 60 probe_refused node-a-bound create -f "$KUBE_DIR/probe-lease-own.yaml" ||
    fail "policy shimkeeper-node-no-leases never started refusing node-a-bound's Lease"
for who in node-a node-a-bound unbound; do
    if [[ $who == node-a ]]; then
        m_admission='can only access leases in the "kube-node-lease" system namespace'
    else
        m_admission="node identities write no Lease in shimkeeper-system"
    fi
    refused "$who" "create slot x-slot-0 held by node-a, RBAC allowing it" \
        shimkeeper-system/lease/x-slot-0 "$m_admission" \
        create -f <(lease x-slot-0 node-a '{shim.containerd.x-k8s.io/holder: node-a}')
    ! grep -qF 'cannot create resource' <<<"$refusal" || fail "$who: RBAC still refused the create"
    refused "$who" "update node-a's grant x-slot-2 (renew), RBAC allowing it" \
        shimkeeper-system/lease/x-slot-2 "$m_admission" \
        replace -f "$(edited x-slot-2 ".spec.renewTime = \"$(now)\"")"
    ! grep -qF 'cannot update resource' <<<"$refusal" || fail "$who: RBAC still refused the update"
    refused "$who" "delete node-b's slot x-slot-1, RBAC allowing it" shimkeeper-system/lease/x-slot-1 \
        "$m_admission" -n shimkeeper-system delete lease x-slot-1
    ! grep -qF 'cannot delete resource' <<<"$refusal" || fail "$who: RBAC still refused the delete"
done
kube_admin -n shimkeeper-system delete rolebinding probe-lease-writer >/dev/null
kube_admin -n shimkeeper-system delete role probe-lease-writer >/dev/null
writes_no_lease() {
    ! kube_as node-a-bound auth can-i create leases.coordination.k8s.io -n shimkeeper-system
}
kube_wait_for 30 writes_no_lease || fail "the probe RoleBinding never went away"

echo "--- the coordinator's attacks"
refused coordinator "delete an unmarked RuntimeClass" runtimeclass/foreign \
    "may delete only RuntimeClasses labelled app.kubernetes.io/managed-by=shimkeeper" \
    delete runtimeclass foreign
refused coordinator "change an unmarked RuntimeClass" runtimeclass/foreign \
    "may update only RuntimeClasses labelled app.kubernetes.io/managed-by=shimkeeper" \
    patch runtimeclass foreign --type merge -p '{"scheduling": {"nodeSelector": {"x": "y"}}}'
refused coordinator "add the marker label to an unmarked RuntimeClass" runtimeclass/foreign \
    "may update only RuntimeClasses labelled" label runtimeclass foreign \
    app.kubernetes.io/managed-by=shimkeeper
refused coordinator "create a RuntimeClass without the marker label" runtimeclass/unmarked \
    "may create or keep a RuntimeClass only with the label" create -f <(runtime_class unmarked)
refused coordinator "create a RuntimeClass with another manager's label" runtimeclass/unmarked \
    "may create or keep a RuntimeClass only with the label" \
    create -f <(runtime_class unmarked '{app.kubernetes.io/managed-by: helm}')
# A RuntimeClass of its own is still shaped as a Shim's: it cannot steer tenant pods elsewhere.
refused coordinator "create a marked RuntimeClass without the annotation naming its Shim" \
    runtimeclass/steer "only with the annotation containerd.x-k8s.io/shim" \
    create -f <(managed_rc steer 'del(.metadata.annotations)')
refused coordinator "create a marked RuntimeClass owned by a Node" runtimeclass/steer \
    "no owner but its Shim" create -f <(managed_rc steer \
    '.metadata.ownerReferences[0] |= (.apiVersion = "v1" | .kind = "Node" | .name = "node-a")')
refused coordinator "create a marked RuntimeClass owned by another Shim" runtimeclass/steer \
    "no owner but its Shim" create -f <(managed_rc steer '.metadata.ownerReferences[0].name = "other"')
refused coordinator "create a marked RuntimeClass with two owners" runtimeclass/steer \
    "no owner but its Shim" \
    create -f <(managed_rc steer '.metadata.ownerReferences += [.metadata.ownerReferences[0] |
        (.name = "demo2" | .uid = "00000000-0000-0000-0000-00000000d3e2" | del(.controller))]')
refused coordinator "create a marked RuntimeClass that ignores its Shim's readiness label" \
    runtimeclass/steer "scheduling.nodeSelector holds shim.containerd.x-k8s.io/demo=demo" \
    create -f <(managed_rc steer '.scheduling.nodeSelector = {wasm: "true"}')
refused coordinator "create a marked RuntimeClass selecting another handler's readiness" \
    runtimeclass/steer "scheduling.nodeSelector holds shim.containerd.x-k8s.io/demo=demo" \
    create -f <(managed_rc steer '.scheduling.nodeSelector["shim.containerd.x-k8s.io/demo"] = "runc"')
refused coordinator "read Secrets" - \
    "cannot list resource \"secrets\"" get secrets -n shimkeeper-system
refused coordinator "read a Secret by name" - \
    "cannot get resource \"secrets\"" get secret anything -n kube-system
refused coordinator "create a Lease other than its own or a slot" \
    shimkeeper-system/lease/x-other "may write only its election Lease" \
    create -f <(lease x-other node-a)
refused coordinator "grant a slot to nobody" \
    shimkeeper-system/lease/x-slot-5 "may grant a rollout slot only to a node" \
    create -f <(lease x-slot-5 "")
refused coordinator "grant a slot not labelled with its holder" \
    shimkeeper-system/lease/x-slot-5 "may grant a rollout slot only to a node" \
    create -f <(lease x-slot-5 node-a)
# RBAC grants it patch on its election Lease alone; a slot it changes by an update (a PUT).
refused coordinator "patch node-b's slot (RBAC: patch only on its election Lease)" \
    shimkeeper-system/lease/x-slot-1 "cannot patch resource \"leases\"" \
    -n shimkeeper-system patch lease x-slot-1 --type merge \
    -p '{"metadata": {"annotations": {"shim.containerd.x-k8s.io/revoked": "x"}}}'
# An update keeps the grant (holder, label, grant id) or hands the slot over as a new grant: to a
# node labelled with its name, under a grant id that is neither the old one nor the Lease's uid.
m_handover="may update rollout slot x-slot-1 only keeping its grant"
refused coordinator "hand node-b's slot to node-a keeping its grant (holder and label)" \
    shimkeeper-system/lease/x-slot-1 "$m_handover" \
    replace -f "$(edited x-slot-1 '.spec.holderIdentity = "node-a" |
        .metadata.labels["shim.containerd.x-k8s.io/holder"] = "node-a"')"
refused coordinator "hand node-b's slot to node-a under the Lease's uid as its grant id" \
    shimkeeper-system/lease/x-slot-1 "$m_handover" \
    replace -f "$(edited x-slot-1 '.spec.holderIdentity = "node-a" |
        .metadata.labels["shim.containerd.x-k8s.io/holder"] = "node-a" |
        .metadata.annotations["shim.containerd.x-k8s.io/grant"] = .metadata.uid')"
refused coordinator "hand node-b's slot to node-a by holderIdentity only (a new grant id)" \
    shimkeeper-system/lease/x-slot-1 "$m_handover" \
    replace -f "$(edited x-slot-1 '.spec.holderIdentity = "node-a" |
        .metadata.annotations["shim.containerd.x-k8s.io/grant"] = "g-2"')"
refused coordinator "relabel node-b's slot for node-a by an update" \
    shimkeeper-system/lease/x-slot-1 "$m_handover" \
    replace -f "$(edited x-slot-1 '.metadata.labels["shim.containerd.x-k8s.io/holder"] = "node-a"')"
refused coordinator "clear node-b's slot's holder by an update (a new grant id)" \
    shimkeeper-system/lease/x-slot-1 "$m_handover" \
    replace -f "$(edited x-slot-1 'del(.spec.holderIdentity) |
        .metadata.annotations["shim.containerd.x-k8s.io/grant"] = "g-2"')"
refused coordinator "update x-foreign, a Lease neither its own nor a slot" \
    shimkeeper-system/lease/x-foreign "may write only its election Lease" \
    replace -f "$(edited x-foreign ".spec.renewTime = \"$(now)\"")"
refused coordinator "a Lease outside shimkeeper-system" kube-system/lease/x-slot-0 \
    "cannot create resource \"leases\"" create -f <(lease x-slot-0 x | sed 's/shimkeeper-system/kube-system/')
refused coordinator "change a Shim's spec" shim/demo "may change only the finalizers of a Shim" \
    patch shim demo --type merge -p '{"spec": {"handler": "runc"}}'
refused coordinator "label a Shim" shim/demo "may change only the finalizers of a Shim" \
    label shim demo example.org/x=y
refused coordinator "remove another controller's finalizer from a Shim" shim/demo \
    "may add or remove only its own finalizer" \
    patch shim demo --type merge -p '{"metadata": {"finalizers": null}}'
refused coordinator "patch a Node" node/node-a "cannot patch resource \"nodes\"" \
    label node node-a "$k_shim_label=true" --overwrite

echo "--- what the coordinator must still do"
allowed coordinator "read Nodes" get nodes
allowed coordinator "read Leases in shimkeeper-system" -n shimkeeper-system get leases
allowed coordinator "read RuntimeClasses" get runtimeclasses
allowed coordinator "add its finalizer to a Shim" patch shim demo --type json \
    -p '[{"op": "add", "path": "/metadata/finalizers/-", "value": "shim.containerd.x-k8s.io/uninstall"}]'
[[ $(kube_admin get shim demo -o jsonpath='{.metadata.finalizers}') == \
    '["example.org/protect","shim.containerd.x-k8s.io/uninstall"]' ]] ||
    fail "the finalizers are not as expected"
allowed coordinator "remove its finalizer from a Shim" patch shim demo --type merge \
    -p '{"metadata": {"finalizers": ["example.org/protect"]}}'
allowed coordinator "write a Shim's status" patch shim demo --subresource status --type merge \
    -p '{"status": {"observedGeneration": 1, "nodes": {"selected": 2}}}'
[[ $(kube_admin get shim demo -o jsonpath='{.status.nodes.selected}') == 2 ]] ||
    fail "the coordinator's status write did not land"
allowed coordinator "create a marked RuntimeClass for Shim demo" create -f <(managed_rc shimkeeper-demo)
allowed coordinator "patch a marked RuntimeClass" patch runtimeclass shimkeeper-demo --type merge \
    -p '{"scheduling": {"nodeSelector": {"wasm": "yes"}}}'
refused coordinator "remove the marker label from its RuntimeClass" runtimeclass/shimkeeper-demo \
    "may create or keep a RuntimeClass only with the label" \
    label runtimeclass shimkeeper-demo app.kubernetes.io/managed-by-
# Tolerations and an overhead are a Shim's runtimeClass fields: the policy cannot look the Shim
# up, so, as the rest of the nodeSelector, they are the coordinator's word.
allowed coordinator "give its RuntimeClass tolerations and an overhead" patch runtimeclass \
    shimkeeper-demo --type merge -p \
    '{"overhead": {"podFixed": {"memory": "160Mi"}}, "scheduling": {"tolerations": [{"key": "kata", "operator": "Exists"}]}}'
refused coordinator "drop the readiness label from its RuntimeClass" runtimeclass/shimkeeper-demo \
    "scheduling.nodeSelector holds shim.containerd.x-k8s.io/demo=demo" patch runtimeclass \
    shimkeeper-demo --type merge -p '{"scheduling": {"nodeSelector": {"shim.containerd.x-k8s.io/demo": null}}}'
refused coordinator "hand its RuntimeClass to a Node as owner" runtimeclass/shimkeeper-demo \
    "no owner but its Shim" patch runtimeclass shimkeeper-demo --type merge -p \
    '{"metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "node-a",
      "uid": "00000000-0000-0000-0000-000000000001"}]}}'
allowed coordinator "delete a marked RuntimeClass" delete runtimeclass shimkeeper-demo
allowed coordinator "create its election Lease (held by node-a, a control-plane machine's name)" \
    create -f <(lease shimkeeper-coordinator node-a)
allowed coordinator "renew its election Lease" -n shimkeeper-system patch lease \
    shimkeeper-coordinator --type merge -p "{\"spec\": {\"renewTime\": \"$(now)\"}}"
allowed coordinator "an Event in default" create -f <(event coordinator-shim default "$shim_ref")
allowed coordinator "grant slot demo-slot-0 to node-a" \
    create -f <(lease demo-slot-0 node-a "{shim.containerd.x-k8s.io/holder: node-a}")
allowed coordinator "revoke it (an update keeping its holder)" replace -f "$(edited demo-slot-0 \
    '.metadata.annotations["shim.containerd.x-k8s.io/revoked"] = "holder node-a did not renew it"')"
allowed coordinator "withdraw the revoke and mark it failed (an update keeping its holder)" \
    replace -f "$(edited demo-slot-0 'del(.metadata.annotations["shim.containerd.x-k8s.io/revoked"]) |
        .metadata.annotations["shim.containerd.x-k8s.io/failed"] = "containerd did not start"')"
[[ $(kube_admin -n shimkeeper-system get lease demo-slot-0 -o json |
    jq -r '[.spec.holderIdentity, .metadata.annotations["shim.containerd.x-k8s.io/failed"],
            .metadata.annotations["shim.containerd.x-k8s.io/revoked"] // "-"] | join(" ")') == \
    "node-a containerd did not start -" ]] || fail "the coordinator's updates of demo-slot-0 did not land"
allowed coordinator "hand it over to node-b as a new grant (holder, label, grant id)" \
    replace -f "$(edited demo-slot-0 '.spec.holderIdentity = "node-b" |
        .metadata.labels["shim.containerd.x-k8s.io/holder"] = "node-b" |
        .metadata.annotations = {"shim.containerd.x-k8s.io/grant": (.metadata.uid + "-1")}')"
allowed coordinator "hand it to node-b again as another new grant" \
    replace -f "$(edited demo-slot-0 '.metadata.annotations["shim.containerd.x-k8s.io/grant"] =
        (.metadata.uid + "-2")')"
[[ $(kube_admin -n shimkeeper-system get lease demo-slot-0 -o json |
    jq -r '[.spec.holderIdentity, .metadata.annotations["shim.containerd.x-k8s.io/grant"] ==
            (.metadata.uid + "-2")] | join(" ")') == "node-b true" ]] ||
    fail "the coordinator's hand-overs of demo-slot-0 did not land"
allowed coordinator "free it (delete)" -n shimkeeper-system delete lease demo-slot-0
allowed coordinator "free node-b's slot x-slot-1 (delete)" -n shimkeeper-system delete lease x-slot-1
allowed coordinator "delete x-foreign, a Lease that is no slot" -n shimkeeper-system delete lease x-foreign

echo "--- the coordinator's election Lease is never a node's, whoever it names as holder"
for who in node-a-bound node-a; do
    refused_patch "$who" "renew the coordinator Lease" shimkeeper-system/lease/shimkeeper-coordinator \
        "$(lease_refusal "$who" patch)" "$lease_path/shimkeeper-coordinator" \
        "{\"spec\": {\"renewTime\": \"$(now)\"}}"
    refused_patch "$who" "take over the coordinator Lease" \
        shimkeeper-system/lease/shimkeeper-coordinator "$(lease_refusal "$who" patch)" \
        "$lease_path/shimkeeper-coordinator" '{"spec": {"holderIdentity": "node-b"}}'
    refused "$who" "update the coordinator Lease (a PUT)" shimkeeper-system/lease/shimkeeper-coordinator \
        "$(lease_refusal "$who" update)" \
        replace -f "$(edited shimkeeper-coordinator '.spec.holderIdentity = "node-b"')"
    refused_delete "$who" "delete the coordinator Lease" shimkeeper-system/lease/shimkeeper-coordinator \
        "$(lease_refusal "$who" delete)" "$lease_path/shimkeeper-coordinator"
done

echo "--- API Priority and Fairness"
# The response names the FlowSchema that classified the request.
flow_of() { # IDENTITY PATH
    local headers=$KUBE_DIR/headers
    kube_curl "$1" GET "$2" -D "$headers" -o /dev/null >/dev/null
    sed -n 's/^X-Kubernetes-PF-FlowSchema-UID: *\([^[:space:]]*\).*/\1/Ip' "$headers"
}
uid_of() { kube_admin get flowschema "$1" -o jsonpath='{.metadata.uid}'; }
# (cluster.flow_control_levels covers every level and the kubelet credential's requests.)
[[ $(flow_of node-a-bound /apis/containerd.x-k8s.io/v1alpha1/shims) == $(uid_of shimkeeper-node) ]] ||
    fail "node-a-bound's request was not classified by FlowSchema shimkeeper-node"
pass "node-a-bound: classified by FlowSchema shimkeeper-node (level shimkeeper-node)"
[[ $(flow_of coordinator /apis/containerd.x-k8s.io/v1alpha1/shims) == $(uid_of shimkeeper) ]] ||
    fail "the coordinator's request was not classified by FlowSchema shimkeeper"
pass "coordinator: classified by FlowSchema shimkeeper (workload-high)"
[[ $(flow_of coordinator \
    /apis/coordination.k8s.io/v1/namespaces/shimkeeper-system/leases/shimkeeper-coordinator) == \
    $(uid_of shimkeeper-coordinator-election) ]] ||
    fail "the coordinator's read of its election Lease was not classified by shimkeeper-coordinator-election"
pass "coordinator: its election Lease by FlowSchema shimkeeper-coordinator-election (level shimkeeper-election)"
[[ $(flow_of coordinator /apis/coordination.k8s.io/v1/namespaces/shimkeeper-system/leases) == \
    $(uid_of shimkeeper-coordinator-leases) ]] ||
    fail "the coordinator's list of the slot Leases was not classified by shimkeeper-coordinator-leases"
pass "coordinator: the slot Leases by FlowSchema shimkeeper-coordinator-leases (level shimkeeper-coordinator)"

echo "--- a node labels itself ready for a Shim that does not select it (a coordinator runs)"
# Shim hard is meant for pool b. node-a is not in it, yet its credential may write the readiness
# label shim.containerd.x-k8s.io/hard on its own Node: the RuntimeClass must still not select it.
kube_node_cert_kubeconfig node-a >/dev/null
kube_admin label node node-b pool=b >/dev/null
kube_shim_yaml hard https://artifacts.example.org/hard.tar.gz \
    0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef \
    '  nodeSelector: {pool: b}
  rolloutStrategy: {type: rolling, rolling: {maxUpdate: 1}}' | kube_admin apply -f - >/dev/null
kube_admin -n shimkeeper-system delete lease shimkeeper-coordinator --ignore-not-found >/dev/null
coord_lead node-c
hard_uid=$(kube_admin get shim hard -o jsonpath='{.metadata.uid}')
hard_generation=$(kube_admin get shim hard -o jsonpath='{.metadata.generation}')
rc_selector() { kube_admin get runtimeclass hard -o jsonpath='{.scheduling.nodeSelector}'; }
wait_eq 60 hard kube_admin get runtimeclass hard -o jsonpath='{.handler}'
# rc_selects NODE: the RuntimeClass's nodeSelector matches NODE's labels as the admin reads them.
rc_selects() {
    jq -e --argjson labels "$(kube_admin get node "$1" -o jsonpath='{.metadata.labels}')" \
        'to_entries | all(.key as $k | .value == $labels[$k])' <<<"$(rc_selector)" >/dev/null
}
wait_eq 30 "False SelfAssignableLabels" shim_get hard \
    '.status.conditions[?(@.type=="PoolConfined")].status} {.status.conditions[?(@.type=="PoolConfined")].reason'
pass "Shim hard says PoolConfined=False: $(shim_condition hard PoolConfined message)"

for who in node-a-bound node-a-cert; do
    allowed "$who" "label its own Node ready for Shim hard" label --overwrite node node-a \
        shim.containerd.x-k8s.io/hard=hard
    [[ $(kube_admin get node node-a -o jsonpath='{.metadata.labels.shim\.containerd\.x-k8s\.io/hard}') == hard ]] ||
        fail "$who: node-a's readiness label did not land"
    ! rc_selects node-a || fail "$who: RuntimeClass hard ($(rc_selector)) selects node-a"
    pass "$who: RuntimeClass hard does not select node-a, labelled ready by itself"
    kube_admin label node node-a shim.containerd.x-k8s.io/hard- >/dev/null
done
# The check itself: a node of pool b that says it is ready is selected.
kube_admin label node node-b shim.containerd.x-k8s.io/hard=hard >/dev/null
rc_selects node-b || fail "RuntimeClass hard ($(rc_selector)) does not select node-b, ready in pool b"
pass "RuntimeClass hard selects node-b (pool b, ready)"
[[ $(rc_selector) == '{"pool":"b","shim.containerd.x-k8s.io/hard":"hard"}' ]] ||
    fail "RuntimeClass hard selects on $(rc_selector)"
pass "RuntimeClass hard selects on Shim hard's nodeSelector and its readiness label: $(rc_selector)"

echo "--- a pool is confined only by a node-restriction.kubernetes.io/ label, which no node sets"
# pool=b is a label node-a's kubelet credential may set on itself (NodeRestriction allows any
# key outside kubernetes.io and k8s.io): it then joins pool b, which PoolConfined=False warned of.
allowed node-a-cert "label its own Node pool=b (NodeRestriction allows it)" label node node-a pool=b
refused node-a-cert "label its own Node node-restriction.kubernetes.io/pool=b" node/node-a \
    "is not allowed to modify labels: node-restriction.kubernetes.io/pool" \
    label node node-a node-restriction.kubernetes.io/pool=b
refused node-a-bound "label its own Node node-restriction.kubernetes.io/pool=b" node/node-a \
    "may change only the labels under shim.containerd.x-k8s.io/" \
    label node node-a node-restriction.kubernetes.io/pool=b
kube_admin label node node-b node-restriction.kubernetes.io/pool=b >/dev/null
kube_shim_yaml hard https://artifacts.example.org/hard.tar.gz \
    0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef \
    '  nodeSelector: {pool: b, node-restriction.kubernetes.io/pool: b}
  rolloutStrategy: {type: rolling, rolling: {maxUpdate: 1}}' | kube_admin apply -f - >/dev/null
wait_eq 60 '{"node-restriction.kubernetes.io/pool":"b","pool":"b","shim.containerd.x-k8s.io/hard":"hard"}' rc_selector
wait_eq 30 "True NodeRestrictionLabel" shim_get hard \
    '.status.conditions[?(@.type=="PoolConfined")].status} {.status.conditions[?(@.type=="PoolConfined")].reason'
allowed node-a-cert "label its own Node ready for Shim hard" label --overwrite node node-a \
    shim.containerd.x-k8s.io/hard=hard
! rc_selects node-a || fail "RuntimeClass hard ($(rc_selector)) selects node-a, in pool=b by itself"
rc_selects node-b || fail "RuntimeClass hard ($(rc_selector)) does not select node-b"
pass "confined: node-a (pool=b and ready by itself) is not selected, node-b (labelled by the admin) is"
kube_admin label node node-a pool- shim.containerd.x-k8s.io/hard- >/dev/null
hard_generation=$(kube_admin get shim hard -o jsonpath='{.metadata.generation}')

echo "--- a node's slot request and failure count only for a Shim that selects it"
# hard_grant NAME HOLDER: a slot Lease of Shim hard's current generation granted to HOLDER, as the
# coordinator makes one (held by it and labelled with it).
hard_grant() {
    jq -n --arg name "$1" --arg holder "$2" --arg uid "$hard_uid" --arg gen "$hard_generation" '{
        apiVersion: "coordination.k8s.io/v1", kind: "Lease",
        metadata: {name: $name, namespace: "shimkeeper-system",
                   labels: {"shim.containerd.x-k8s.io/holder": $holder},
                   annotations: {"shim.containerd.x-k8s.io/shim": "hard",
                                 "shim.containerd.x-k8s.io/uid": $uid,
                                 "shim.containerd.x-k8s.io/generation": $gen}},
        spec: {holderIdentity: $holder, leaseDurationSeconds: 15}}'
}
ask_for_hard() { # IDENTITY NODE: the node asks for a slot of Shim hard on its own Node
    allowed "$1" "ask on $2 for a slot of Shim hard" annotate --overwrite node "$2" \
        "shim.containerd.x-k8s.io/slot_requests={\"hard\": {\"uid\": \"$hard_uid\", \"generation\": $hard_generation, \"since\": \"$(now)\"}}"
}
holders_of_hard() {
    kube_admin -n shimkeeper-system get leases -o json |
        jq -r '[.items[] | select(.metadata.annotations["shim.containerd.x-k8s.io/shim"] == "hard")
                | .spec.holderIdentity] | sort | join(" ")'
}
# maxUpdate 1: one slot, granted to the asking nodes in name order. node-a asks first; the
# coordinator's log names every grant (a grant to node-a, never taken, would be freed after a
# lease and go to node-b all the same).
ask_for_hard node-a-bound node-a
ask_for_hard node-b-bound node-b
wait_eq 30 node-b holders_of_hard
! grep -E 'granted rollout slot hard-slot-[0-9]+ .* to node node-a' "$KUBE_DIR/coord-node-c.err" ||
    fail "the coordinator granted node-a a slot of Shim hard"
grep -qE 'granted rollout slot hard-slot-0 of Shim/hard generation [0-9]+ to node node-b' \
    "$KUBE_DIR/coord-node-c.err" || fail "the coordinator's log names no grant to node-b"
pass "node-a's request for Shim hard gets no slot; node-b's (pool b) does"

# A node creates no slot Lease, not even one the Shim would grant it, however long a lease it
# would give itself (68 years: were a node's leaseDurationSeconds trusted, it would hold the slot
# for good): node-b, in pool b, with either credential.
kube_node_cert_kubeconfig node-b >/dev/null
for who in node-b-bound node-b-cert; do
    refused "$who" "create slot hard-slot-3 held by itself with leaseDurationSeconds 2147483647" \
        shimkeeper-system/lease/hard-slot-3 "$(lease_refusal "$who" create)" \
        create -f <(hard_grant hard-slot-3 node-b | jq '.spec.leaseDurationSeconds = 2147483647')
done

# Whether the coordinator ever halted Shim hard: its Warning Event RolloutHalted stays.
halt_events() {
    kube_admin get events.events.k8s.io -n default -o json | jq -r '[.items[] |
        select(.reason == "RolloutHalted" and .regarding.name == "hard") | .note] | join("; ")'
}
failed_holders_of_hard() {
    kube_admin -n shimkeeper-system get leases -o json |
        jq -r '[.items[] | select(.metadata.annotations["shim.containerd.x-k8s.io/shim"] == "hard" and
                .metadata.annotations["shim.containerd.x-k8s.io/failed"] != null)
                | .spec.holderIdentity] | sort | join(" ")'
}
# node-a says on its own Node that it failed a grant of Shim hard, with both credentials (the
# admin plays the coordinator that granted it: the running one grants node-a nothing).
kube_admin create -f <(hard_grant hard-slot-5 node-a) >/dev/null
for who in node-a-bound node-a-cert; do
    allowed "$who" "say on node-a that it failed its grant hard-slot-5 of Shim hard" \
        annotate --overwrite node node-a \
        "shim.containerd.x-k8s.io/held_hard=$(held hard hard-slot-5 "containerd did not start ($who)")"
done
# Then node-b (pool b) fails its grant. Once the coordinator has recorded that, it has judged
# node-a's failure too (its Node watch delivers the changes in order, node-a's first, and each
# pass judges every node's entries), so whatever it was to do about node-a's is done.
allowed node-b-cert "say on node-b that it failed its grant hard-slot-0 of Shim hard" \
    annotate --overwrite node node-b \
    "shim.containerd.x-k8s.io/held_hard=$(held hard hard-slot-0 "containerd did not start")"
wait_eq 30 True shim_condition hard RolloutHalted status
[[ $(shim_condition hard RolloutHalted message) == *"node node-b failed"* ]] ||
    fail "RolloutHalted does not name node-b: $(shim_condition hard RolloutHalted message)"
[[ $(halt_events) == *"node node-b failed"* ]] || fail "no RolloutHalted Event names node-b"
pass "node-b's failure (pool b), said on its own Node, halts Shim hard"
[[ $(state shimkeeper-system/lease/hard-slot-5) != absent ]] ||
    fail "node-a's grant hard-slot-5 went before it could be seen unmarked"
[[ $(kube_admin -n shimkeeper-system get lease hard-slot-5 -o json |
    jq -r '.metadata.annotations["shim.containerd.x-k8s.io/failed"] // "unmarked"') == unmarked ]] ||
    fail "the coordinator marked node-a's grant hard-slot-5 failed"
[[ $(failed_holders_of_hard) == node-b ]] ||
    fail "the failed slots of Shim hard are held by \"$(failed_holders_of_hard)\", not node-b alone"
[[ $(halt_events) != *"node node-a"* && $(shim_condition hard RolloutHalted message) != *"node node-a"* ]] ||
    fail "node-a's failure halted Shim hard: $(halt_events)"
! grep -q 'node node-a failed Shim/hard' "$KUBE_DIR/coord-node-c.err" ||
    fail "the coordinator recorded node-a's failure of Shim hard"
pass "node-a's failure (not in pool b) marked no slot failed and halted nothing"
