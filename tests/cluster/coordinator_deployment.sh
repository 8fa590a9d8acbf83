#!/usr/bin/env bash
# The coordinator as the Deployment deploy/60-coordinator.yaml ships, on a real node
# (tests/support/kube_node.sh: kubelet, kube-scheduler, kube-controller-manager):
#   - scripts/image builds the image (its Debian root and the .deb cached); it is
#     imported into the node's containerd with `ctr -n k8s.io images import` and the kubelet runs
#     it as it is (imagePullPolicy IfNotPresent: nothing can be pulled here).
#   - deploy/60-coordinator.yaml is applied with one change a cluster does not need: no kube-proxy
#     runs, so the container's env gives KUBERNETES_SERVICE_HOST/PORT a forwarder to the API server
#     on the Pod network's gateway (the API server's certificate names that address). The Pods
#     keep the Pod network rather than hostNetwork: two replicas on this one node would both take
#     port 8080 of the host, and a Pod's hostname (its candidate identity) is its own name only
#     on a network of its own.
#   - Both replicas turn Ready (the projected ServiceAccount token, the kubelet's probes on
#     /readyz and /healthz); one holds the Lease shimkeeper-coordinator (its holderIdentity names
#     the Pod), the other stands by, ready too. A Shim selecting the node is installed by the
#     node's agent (`shimkeeper run` with the kubelet's credential), the Pod writes its
#     RuntimeClass and counts installed 1/1 in its status.
#   - The leading Pod deleted: another live Pod (the standby, or the Deployment's replacement if
#     it starts first) takes the Lease within a lease (15 s) plus margin; a second Shim applied
#     after that rolls out through the new leader (RuntimeClass, 1/1). Both Pods turn Ready, one
#     leads, the other stands by.
# seconds-about: 150
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_shim.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_node.sh"
export SHIMKEEPER_CONTAINERD_LINE=${SHIMKEEPER_CONTAINERD_LINE:-2}
kube_require_peers
node_reexec_in_namespace "$@"
kube_node_require
for tool in mmdebstrap readelf strip; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/image needs it)"
done
sk_init
started=$SECONDS
step() { echo "[$((SECONDS - started)) s] $*"; }
NS=shimkeeper-system

echo "--- the coordinator's image (scripts/image)"
image_out=$("$SHIMKEEPER_SOURCE_DIR/scripts/image" --output "$T/shimkeeper.oci.tar" 2>"$T/image.log") ||
    fail "scripts/image failed: $(tail -n 20 "$T/image.log")"
image=$(awk '$1 == "name" { print $2 }' <<<"$image_out")
step "image $image built: $(awk '$1 == "digest" { print $2 }' <<<"$image_out")"

# The Pod network gets a gateway on the host side (the kubelet probes the Pods from there), and
# the API server's certificate names it: the forwarder there stands in for kube-proxy.
KUBE_NODE_SUBNET=$(kube_node_free_subnet) || fail "no free 10.x.y.0/24 for the Pod network"
gateway=${KUBE_NODE_SUBNET%.0/24}.1
export KUBE_NODE_SUBNET KUBE_NODE_POD_GATEWAY=true KUBE_APISERVER_EXTRA_SANS=IP:$gateway
kube_up "$T/kube"
node_up "$T/node"
kube_node_up node-a wasm=true
step "control plane, kubelet and Node node-a Ready"

node_import_archive "$T/shimkeeper.oci.tar" "$image" || fail "the image was not imported"
step "$image imported into the node's containerd (k8s.io)"

python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/pausable_proxy.py" 127.0.0.1 "$KUBE_APISERVER_PORT" \
    "$T/forwarder.port" "$T/forwarder.state" "$gateway" &
sk_track $!
kube_wait_for 10 test -s "$T/forwarder.port" || fail "the forwarder to the API server never listened"
service_port=$(<"$T/forwarder.port")

# deploy/60-coordinator.yaml as shipped, but for the in-cluster address.
kube_admin create --dry-run=client -o json -f "$SHIMKEEPER_SOURCE_DIR/deploy/60-coordinator.yaml" |
    jq -s --arg host "$gateway" --arg port "$service_port" '{apiVersion: "v1", kind: "List",
        items: map(if .kind == "Deployment" then .spec.template.spec.containers[0].env =
            [{name: "KUBERNETES_SERVICE_HOST", value: $host},
             {name: "KUBERNETES_SERVICE_PORT", value: $port}] else . end)}' >"$T/coordinator.json"
kube_admin apply -f "$T/coordinator.json" >/dev/null
applied_at=$SECONDS

coordinator_pods() { # the names of the Deployment's Pods that are not being deleted
    kube_admin -n "$NS" get pods -l app.kubernetes.io/component=coordinator -o json |
        jq -r '.items[] | select(.metadata.deletionTimestamp == null) | .metadata.name' | sort
}
pod_ready() {
    [[ $(kube_admin -n "$NS" get pod "$1" \
        -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]]
}
# Two Pods of the Deployment, each Ready.
two_ready() {
    local pods pod
    mapfile -t pods < <(coordinator_pods)
    ((${#pods[@]} == 2)) || return 1
    for pod in "${pods[@]}"; do
        pod_ready "$pod" || return 1
    done
}
# Why the Pods are not Ready: each one's phase, its container's state and last exit, the last lines
# its container wrote (the kubelet's log files: `kubectl logs` cannot reach this kubelet), and the
# last events of the namespace.
pods_say() {
    kube_admin -n "$NS" get pods -l app.kubernetes.io/component=coordinator -o json | jq -r '
        .items[] | .status.containerStatuses[0] as $c | "\(.metadata.name) \(.status.phase)
            state \($c.state // {} | tostring) last \($c.lastState // {} | tostring)"'
    local log
    for log in "$NODE_DIR"/log/pods/"$NS"_shimkeeper-coordinator-*/coordinator/*.log; do
        [[ -f $log ]] && echo "log $log:" && tail -n 3 "$log"
    done
    kube_admin -n "$NS" get events --sort-by .lastTimestamp -o json |
        jq -r '.items[-8:][] | "event: \(.involvedObject.name) \(.reason): \(.message)"'
}
leader() {
    kube_admin -n "$NS" get lease shimkeeper-coordinator -o jsonpath='{.spec.holderIdentity}' 2>/dev/null
}
# The Pod a holderIdentity names (the identity is the Pod's hostname, its name, then _<random>).
leader_pod() { local holder; holder=$(leader) && [[ -n $holder ]] && echo "${holder%_*}"; }
led_by() { [[ $(leader_pod) == "$1" ]]; }

kube_wait_for 120 two_ready || fail "the coordinator's Pods are not both Ready $((SECONDS - applied_at)) s after the apply:
$(pods_say)"
step "both replicas Ready $((SECONDS - applied_at)) s after the apply"
mapfile -t pods < <(coordinator_pods)
kube_wait_for 30 leader_pod || fail "no Pod holds the Lease shimkeeper-coordinator: $(pods_say)"
first_leader=$(leader_pod)
[[ " ${pods[*]} " == *" $first_leader "* ]] ||
    fail "the Lease's holder '$(leader)' names none of the Pods (${pods[*]})"
standby=${pods[0]}
[[ $standby != "$first_leader" ]] || standby=${pods[1]}
echo "ok: $first_leader leads (holderIdentity $(leader)); $standby stands by, Ready too"

echo "--- a Shim rolled out by the leading Pod"
node_shim_serve
node_shim_artifact demo v1
node_shim_artifact demo2 v1
node_agent_start_in_cluster "$KUBE_NODE_KUBECONFIG" --status-file "$NODE_DIR/run/status.json"
counts() { # SHIM: "selected installed" from its status
    kube_admin get shim "$1" -o jsonpath='{.status.nodes.selected} {.status.nodes.installed}' 2>/dev/null
}
rolled_out() { kube_admin get runtimeclass "$1" >/dev/null 2>&1 && [[ $(counts "$1") == "1 1" ]]; }
rollout() { # SHIM: applies it (selecting node-a), waits until the coordinator counts it installed
    local at=$SECONDS
    kube_shim_yaml "$1" "$SERVER_URL/$1-v1.tar.gz" "$(node_shim_digest "$1" v1)" \
        '  nodeSelector: {wasm: "true"}' | kube_admin apply -f - >/dev/null
    kube_wait_for 120 rolled_out "$1" ||
        fail "Shim $1 is not rolled out: RuntimeClass $(kube_admin get runtimeclass "$1" -o name 2>&1); status '$(counts "$1")' (selected installed); leader '$(leader)'
$(pods_say)
$(tail -n 20 "$NODE_DIR/log/agent.log")"
    step "Shim $1: RuntimeClass written and installed 1/1, $((SECONDS - at)) s after the apply"
}
rollout demo
led_by "$first_leader" || fail "the Lease moved during the rollout, to '$(leader)'"

echo "--- the leading Pod deleted: another Pod takes over"
kube_admin -n "$NS" delete pod "$first_leader" --wait=false >/dev/null
deleted_at=$SECONDS
# The old leader gives the Lease up as it stops, so either live Pod may take it: the standby, or
# the Deployment's replacement if it starts first. The holder is read once per check and kept.
new_leader=
led_by_another() {
    local pod
    pod=$(leader_pod) && [[ $pod != "$first_leader" ]] || return 1
    new_leader=$pod
}
# A lease (15 s) for the old holder's to run out, plus the standby's retry period and margin.
kube_wait_for 30 led_by_another ||
    fail "no other Pod took the Lease within 30 s of $first_leader's deletion: holder '$(leader)'
$(pods_say)"
who="the standby $new_leader"
[[ $new_leader == "$standby" ]] || who="the Deployment's replacement $new_leader"
step "$who took the Lease $((SECONDS - deleted_at)) s after $first_leader's deletion"
rollout demo2
led_by "$new_leader" || fail "the Lease left $new_leader during the second rollout, to '$(leader)'"
replaced() { two_ready && ! coordinator_pods | grep -qx "$first_leader"; }
kube_wait_for 120 replaced || fail "the Deployment's replacement Pod is not Ready: $(pods_say)"
mapfile -t pods < <(coordinator_pods)
standing_by=${pods[0]}
[[ $standing_by != "$new_leader" ]] || standing_by=${pods[1]}
led_by "$new_leader" || fail "the Lease moved to '$(leader)' when the replacement came up"
echo "ok: both Pods Ready; $new_leader leads, $standing_by stands by"

# The Deployment deleted: the kubelet stops its Pods now, rather than containerd's shutdown later
# (which waits on each running sandbox).
kube_admin -n "$NS" delete deployment shimkeeper-coordinator --wait=false >/dev/null
no_pods() { [[ -z $(kube_admin -n "$NS" get pods -l app.kubernetes.io/component=coordinator -o name) ]]; }
kube_wait_for 90 no_pods || fail "the coordinator's Pods outlived the Deployment: $(pods_say)"
step "PASS: the Deployment's Pods stopped"
