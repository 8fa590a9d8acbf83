#!/usr/bin/env bash
# The chain a user relies on, with a real kubelet and kube-scheduler (tests/support/kube_node.sh):
# one sandboxed node (systemd --user + containerd 2.x) whose kubelet registers Node node-a
# (wasm=true) with its own client certificate; `shimkeeper run` on it with that same kubelet
# credential; the coordinator as a process of its own. The chart is applied as such a cluster
# installs it, every agent on its kubelet's credential: nodeServiceAccount=false (no node
# ServiceAccount, no admission policy on Node writes), and Shim demo rolls through a slot.
#   - A node selected but whose install failed and rolled back never gets such a Pod. Done on the
#     same node before the good install (a second kubelet costs a second sandbox node and minutes):
#     Shim broken selects node-a, its containerd refuses to start with handler broken, the agent
#     rolls back (annotation failed, no label); the coordinator writes RuntimeClass broken anyway;
#     a Pod with runtimeClassName broken stays Pending, its PodScheduled condition giving the
#     scheduler's reason (the node does not match the Pod's node selector). Shim broken is then
#     deleted (the agent batches every change into one containerd restart, so a Shim that keeps
#     failing would hold the next one back); the Pod stays.
#   - node-a is tainted; Shim demo's runtimeClass carries overhead and a toleration of the taint.
#   - Shim demo (a renamed containerd-shim-runc-v2 served on 127.0.0.1) selects node-a: the agent
#     installs it, labels the Node; the coordinator writes RuntimeClass demo; a Pod with
#     runtimeClassName demo is scheduled by kube-scheduler onto node-a and reaches Running, its
#     containerd container runs on runtime io.containerd.demo.v2 and its process's parent is the
#     installed containerd-shim-demo-v2, as is its sandbox's (the imported pause image). The Pod
#     is charged the overhead (spec.overhead) and tolerates the taint. The taint goes; the broken
#     Pod is still Pending after that pass.
#   - The drain promise: Shim demo deleted while the Pod runs: the label goes (a new demo Pod
#     stays Pending), the handler stays in containerd's config and CRI, the RuntimeClass stays, the
#     annotation says removing, blocked by the Pod. The Pod deleted: the kubelet stops and removes
#     its sandbox, the handler goes from CRI and the config, then the RuntimeClass and the Shim.
# seconds-about: 120
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_shim.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/coordinator_process.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_node.sh"
export SHIMKEEPER_CONTAINERD_LINE=${SHIMKEEPER_CONTAINERD_LINE:-2}
kube_require_peers
node_reexec_in_namespace "$@"
kube_node_require
sk_init
started=$SECONDS
step() { echo "[$((SECONDS - started)) s] $*"; }

export KUBE_CHART_SET=nodeServiceAccount=false
kube_up "$T/kube"
! kube_admin -n shimkeeper-system get serviceaccount shimkeeper-node >/dev/null 2>&1 &&
    ! kube_admin get validatingadmissionpolicy shimkeeper-node-own-node >/dev/null 2>&1 ||
    fail "the chart with nodeServiceAccount=false still made the node ServiceAccount or its own-Node policy"
node_up "$T/node"
kube_node_up node-a wasm=true
step "control plane, kubelet and Node node-a Ready"
node_shim_serve
node_shim_artifact demo v1
node_shim_artifact broken v1
node_agent_start_in_cluster "$KUBE_NODE_KUBECONFIG" --status-file "$NODE_DIR/run/status.json"
coordinator_start coord-1

annotation_state() { # SHIM: the node's state for SHIM ("" without an annotation)
    kube_admin get node node-a -o json | jq -r --arg k "shim.containerd.x-k8s.io/$1" \
        '.metadata.annotations[$k] // "{}" | fromjson | .state // ""'
}
state_is() { [[ "$(annotation_state "$1")" == "$2" ]]; }
label() { kube_admin get node node-a -o json | jq -r --arg k "shim.containerd.x-k8s.io/$1" '.metadata.labels[$k] // ""'; }
pod_phase() { kube_admin get pod "$1" -o jsonpath='{.status.phase}'; }
pod_running() { [[ "$(pod_phase "$1")" == Running ]]; }
pod_scheduled() { # POD: status, reason and message of its PodScheduled condition
    kube_admin get pod "$1" -o json |
        jq -r '.status.conditions[]? | select(.type == "PodScheduled") | "\(.status) \(.reason // "") \(.message // "")"'
}
unschedulable_by_selector() {
    [[ "$(pod_scheduled "$1")" == "False Unschedulable "*"node(s) didn't match Pod's node affinity/selector"* ]]
}
agent_log() { tail -n 30 "$NODE_DIR/log/agent.log"; }

echo "--- a Shim whose install fails on node-a and rolls back"
node_unit_dropin 60-refuse-broken "[Service]
ExecStartPre=/bin/sh -c '! grep -rq \"runtimes\\.broken\" $NODE_CONFIG_DIR'"
kube_shim_yaml broken "$SERVER_URL/broken-v1.tar.gz" "$(node_shim_digest broken v1)" \
    '  nodeSelector: {wasm: "true"}' | kube_admin apply -f - >/dev/null
kube_wait_for 120 state_is broken failed || fail "node-a's state for broken: $(annotation_state broken); $(agent_log)"
[[ -z "$(label broken)" ]] || fail "node-a carries the broken label after failing"
node_cri_lacks_handler broken || fail "node-a's CRI lists the refused handler"
kube_wait_for 30 kube_admin get runtimeclass broken || fail "the coordinator wrote no RuntimeClass broken"
step "broken failed and rolled back on node-a; RuntimeClass broken exists"
kube_node_pod_yaml on-broken broken | kube_admin apply -f - >/dev/null
kube_wait_for 60 unschedulable_by_selector on-broken ||
    fail "the Pod on RuntimeClass broken is not refused by the scheduler's node selector: $(pod_scheduled on-broken)"
step "Pod on-broken Pending: $(pod_scheduled on-broken)"
# The agent batches every change into one restart: while broken fails, nothing else installs.
kube_admin delete shim broken >/dev/null
node_unit_dropin 60-refuse-broken
kube_wait_for 60 state_is broken "" || fail "node-a still says $(annotation_state broken) about broken"
step "Shim broken deleted (Pod on-broken left Pending)"

echo "--- Shim demo installed on a tainted node; a Pod on its RuntimeClass runs through the installed shim"
# A pool of sandboxed nodes is often tainted: the RuntimeClass's tolerations let its Pods on,
# and its overhead is charged to each Pod by the API server's RuntimeClass admission.
kube_admin taint node node-a sandboxed=true:NoSchedule >/dev/null
kube_shim_yaml demo "$SERVER_URL/demo-v1.tar.gz" "$(node_shim_digest demo v1)" \
    '  nodeSelector: {wasm: "true"}
  runtimeClass:
    name: demo
    overhead: {podFixed: {cpu: 250m, memory: 64Mi}}
    tolerations: [{key: sandboxed, operator: Exists, effect: NoSchedule}]
  rolloutStrategy: {rolling: {maxUpdate: 1}}' | kube_admin apply -f - >/dev/null
kube_wait_for 120 state_is demo installed || fail "node-a's state for demo: $(annotation_state demo); $(agent_log)"
grep -q "granted rollout slot demo-slot-0 of Shim/demo generation 1 to node node-a" "$T/coord-1.log" ||
    fail "node-a installed demo without a slot granted: $(grep -i slot "$T/coord-1.log" | tail -n 5)"
[[ "$(label demo)" == demo ]] || fail "node-a's label for demo: '$(label demo)'"
kube_wait_for 30 kube_admin get runtimeclass demo || fail "the coordinator wrote no RuntimeClass demo"
step "demo installed and labelled on node-a; RuntimeClass demo exists"
kube_node_pod_yaml on-demo demo | kube_admin apply -f - >/dev/null
kube_wait_for 120 pod_running on-demo ||
    fail "Pod on-demo is $(pod_phase on-demo): $(pod_scheduled on-demo); $(kube_admin describe pod on-demo | tail -n 10)"
[[ "$(kube_admin get pod on-demo -o jsonpath='{.spec.nodeName}')" == node-a ]] ||
    fail "Pod on-demo was not scheduled onto node-a"
step "Pod on-demo Running on node-a"
overhead=$(kube_admin get pod on-demo -o json | jq -c '.spec.overhead')
[[ $overhead == '{"cpu":"250m","memory":"64Mi"}' ]] ||
    fail "Pod on-demo is not charged the RuntimeClass's overhead: spec.overhead $overhead"
kube_admin get pod on-demo -o json | jq -e '.spec.tolerations[] | select(.key == "sandboxed")' >/dev/null ||
    fail "Pod on-demo does not carry the RuntimeClass's toleration"
echo "ok: Pod on-demo landed on the tainted node-a, charged overhead $overhead"
kube_admin taint node node-a sandboxed- >/dev/null

kube_node_pod_under_shim on-demo io.containerd.demo.v2 containerd-shim-demo-v2
echo "ok: the Pod's container $POD_CONTAINER: runtime io.containerd.demo.v2, parent $POD_SHIM_EXE (pid $POD_SHIM_PID)"
sandbox=$(ctr -a "$NODE_SOCKET" -n k8s.io containers ls -q \
    'labels."io.cri-containerd.kind"==sandbox,labels."io.kubernetes.pod.name"==on-demo')
[[ -n $sandbox && $sandbox != *$'\n'* ]] || fail "not one sandbox container of Pod on-demo: '$sandbox'"
sandbox_image=$(ctr -a "$NODE_SOCKET" -n k8s.io containers info "$sandbox" | jq -r .Image)
[[ $sandbox_image == "$NODE_PAUSE_IMAGE" ]] ||
    fail "the Pod's sandbox $sandbox runs image '$sandbox_image', not the imported $NODE_PAUSE_IMAGE"
[[ "$(node_pod_shim_exe "$sandbox")" == "$POD_SHIM_EXE" ]] ||
    fail "the Pod's sandbox does not run under the same installed shim"
echo "ok: its sandbox $sandbox runs $sandbox_image under the same shim"
# The taint was a reason of its own for a while: wait for the scheduler's next word on the Pod.
kube_wait_for 60 unschedulable_by_selector on-broken ||
    fail "Pod on-broken is no longer refused: $(pod_scheduled on-broken), on $(kube_admin get pod on-broken -o jsonpath='{.spec.nodeName}')"
echo "ok: Pod on-broken still Pending: $(pod_scheduled on-broken)"

echo "--- Shim demo deleted while its Pod runs: the handler stays until the Pod is gone"
kube_admin delete shim demo --wait=false >/dev/null
unlabelled() { [[ -z "$(label demo)" ]]; }
kube_wait_for 60 unlabelled || fail "node-a kept its demo label after the Shim's deletion"
blocked() { [[ "$(annotation_state demo)" == removing ]] && kube_admin get node node-a -o json |
    jq -r '.metadata.annotations["shim.containerd.x-k8s.io/demo"] | fromjson | .reason' |
    grep -q "blocked by 1 pod(s) on handler demo"; }
kube_wait_for 60 blocked || fail "node-a's annotation for demo does not say removal is blocked: $(kube_admin get node node-a -o jsonpath='{.metadata.annotations}')"
node_cri_has_handler demo || fail "the handler left CRI while Pod on-demo runs"
node_config_has_handler demo || fail "the handler left containerd's config while Pod on-demo runs"
kube_admin get runtimeclass demo >/dev/null || fail "RuntimeClass demo went while Pod on-demo runs"
pod_running on-demo || fail "Pod on-demo is $(pod_phase on-demo) after the Shim's deletion"
kube_node_pod_yaml on-demo-late demo | kube_admin apply -f - >/dev/null
kube_wait_for 60 unschedulable_by_selector on-demo-late ||
    fail "a new Pod on RuntimeClass demo is not kept off the unlabelled node: $(pod_scheduled on-demo-late)"
step "removal blocked by the running Pod: label off, handler and RuntimeClass kept, a new Pod Pending"

kube_admin delete pod on-demo on-demo-late --wait=false >/dev/null
deleted_at=$SECONDS
handler_gone() { node_cri_lacks_handler demo && ! node_config_has_handler demo; }
kube_wait_for 150 handler_gone || fail "the handler stayed after Pod on-demo was deleted: $(annotation_state demo); $(agent_log)"
step "handler gone $((SECONDS - deleted_at)) s after the Pod's deletion"
shim_gone() { ! kube_admin get shim demo >/dev/null 2>&1 && ! kube_admin get runtimeclass demo >/dev/null 2>&1; }
kube_wait_for 60 shim_gone || fail "Shim demo or its RuntimeClass stayed after the handler went"
[[ -z "$(annotation_state demo)" ]] || fail "node-a still says $(annotation_state demo) about demo"
step "PASS: a Pod ran through the installed shim; the failed node got none; the handler outlived the Shim until the Pod went"
