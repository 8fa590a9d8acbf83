#!/usr/bin/env bash
# Two real sandboxed nodes (systemd --user + containerd each, side by side,
# tests/support/cluster_node.sh), each with `shimkeeper run` in cluster mode against the real API
# server, driven only with kubectl as a cluster operator would:
#   - a Shim selecting node-a: only node-a installs; its label appears only once CRI lists the
#     handler; a CRI pod sandbox on the handler runs the installed binary; node-b's config bytes
#     and containerd are untouched;
#   - node-b relabelled to match installs it too; a new artifact in the Shim upgrades both;
#   - a change containerd refuses on node-b only: rolled back there, annotation `failed` with the
#     reason, no label, a Warning Event on the Shim; node-a installs it;
#   - the API server stopped (and etcd compacted meanwhile, so the watches come back to 410 and
#     list again: nothing is reinstalled): nothing changes on the nodes, `status` says unreachable; back up,
#     the agents converge on what changed meanwhile;
#   - the coordinator (`shimkeeper coordinate`, its own identity) adds the finalizer and creates
#     the RuntimeClass
#     (handler, nodeSelector on the label and the Shim's own selector) and counts the nodes in
#     the Shim's status;
#   - the Shim deleted: each node takes its label off before containerd drops the handler (the
#     deletion's own log lines, uninstall_order.py; tests/cluster/uninstall_order_check.sh proves
#     the check fails when the order is reversed), then the handler leaves CRI and the annotation
#     goes; on node-a a pod sandbox still runs on the handler: the label goes, the
#     handler stays, the annotation says `removing: blocked by 1 pod(s)`, a RemovalBlocked Event
#     and the Shim's status say so, `status` on the node too; once the pod is gone the handler
#     goes. After the last node the RuntimeClass is deleted, the finalizer removed and the
#     object is gone.
# seconds-about: 80
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_shim.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/coordinator_process.sh"
kube_require_peers
node_reexec_in_namespace "$@"
sk_init
kube_up "$T/kube"
node_shim_serve
for variant in v1 v2; do
    node_shim_artifact demo "$variant"
done
node_shim_artifact broken v1

kube_create_node node-a wasm=true
kube_create_node node-b
coordinator_start coord-1

# start_node LETTER: node-LETTER in $T/LETTER, with its agent.
start_node() {
    bash "$SHIMKEEPER_SOURCE_DIR/tests/support/cluster_node.sh" "$T/$1" "node-$1" \
        "$(kube_node_token_kubeconfig "node-$1")" >"$T/$1.out" 2>&1 &
    sk_track $!
}
# on LETTER CMD...: CMD with that node's exports (its containerd, its systemd --user).
on() {
    local letter=$1
    shift
    (
        # shellcheck disable=SC1090
        source "$T/$letter/node.env"
        "$@"
    )
}
agent_log() { cat "$T/$1/agent.log" 2>/dev/null; }
agent_committed() {
    python3 -S -c 'import json, sys
r = json.load(open(sys.argv[1])).get("result") or {}
sys.exit(0 if r.get("result") == "committed" else 1)' "$T/$1/status.json" 2>/dev/null
}
label() {
    kube_admin get node "node-$1" \
        -o jsonpath="{.metadata.labels.shim\.containerd\.x-k8s\.io/$2}"
}
# state LETTER SHIM: the annotation's state and generation, "installed@2"; "" when none.
state() {
    kube_admin get node "node-$1" -o json | python3 -S -c 'import json, sys
a = json.load(sys.stdin)["metadata"].get("annotations", {}).get("shim.containerd.x-k8s.io/" + sys.argv[1])
print("" if a is None else "%s@%s" % (json.loads(a)["state"], json.loads(a)["generation"]))' "$2"
}
state_is() { [[ "$(state "$1" "$2")" == "$3" ]]; }
labelled() { [[ "$(label "$1" "$2")" == "$2" ]]; } # the label names the handler: the Shim's name here
unlabelled() { [[ -z "$(label "$1" "$2")" ]]; }
wait_state() {
    kube_wait_for "${4:-90}" state_is "$1" "$2" "$3" ||
        fail "node-$1 says '$(state "$1" "$2")' about $2, not $3; its agent: $(agent_log "$1" | tail -n 25)"
}
shim_object() { # NAME VARIANT SELECTOR
    kube_shim_yaml "$1" "$SERVER_URL/$1-$2.tar.gz" "$(node_shim_digest "$1" "$2")" "  nodeSelector: $3"
}

start_node a
start_node b
for letter in a b; do
    kube_wait_for 60 test -e "$T/$letter/ready" || fail "node $letter did not come up: $(cat "$T/$letter.out")"
    kube_wait_for 60 agent_committed "$letter" ||
        fail "the agent of node-$letter did not converge: $(agent_log "$letter")"
done
config_b=$(on b node_config_digest)

echo "--- a Shim selecting node-a"
shim_object demo v1 '{wasm: "true"}' | kube_admin apply -f - >/dev/null
kube_wait_for 90 labelled a demo || fail "node-a never got the demo label: $(agent_log a | tail -n 30)"
# The label means "healthy with it": CRI lists the handler by now.
on a node_cri_has_handler demo || fail "node-a is labelled but CRI does not list handler demo"
wait_state a demo installed@1
on a node_pause_image >/dev/null
pod=$(on a node_cri_client run-pod demo-pod demo "$(on a printenv NODE_CGROUP_PARENT)")
exe=$(on a node_pod_shim_exe "$pod")
[[ $exe == "$T/a/var/lib/shimkeeper/store/sha256/$(node_shim_digest demo v1)/containerd-shim-demo-v2" ]] ||
    fail "the pod sandbox on node-a runs $exe, not the installed shim"
on a node_cri_client stop-pod "$pod" >/dev/null
on a node_cri_client remove-pod "$pod" >/dev/null
runtime_class() {
    kube_admin get runtimeclass demo -o jsonpath='{.handler} {.scheduling.nodeSelector}' 2>/dev/null
}
rc_ok() { [[ "$(runtime_class)" == 'demo {"shim.containerd.x-k8s.io/demo":"demo","wasm":"true"}' ]]; }
kube_wait_for 60 rc_ok || fail "RuntimeClass demo is '$(runtime_class)'"
[[ "$(kube_admin get shim demo -o jsonpath='{.metadata.finalizers}')" == *shim.containerd.x-k8s.io/uninstall* ]] ||
    fail "Shim demo has no finalizer"
status_is() { [[ "$(kube_admin get shim demo -o jsonpath='{.status.nodes.selected}/{.status.nodes.installed}')" == "$1" ]]; }
kube_wait_for 60 status_is 1/1 || fail "Shim demo's status: $(kube_admin get shim demo -o jsonpath='{.status}')"
[[ -z "$(state b demo)" ]] && unlabelled b demo || fail "node-b says something about demo"
[[ "$(on b node_config_digest)" == "$config_b" ]] || fail "node-b's containerd config changed"
[[ "$(on b node_starts)" == 0 ]] || fail "node-b's containerd restarted $(on b node_starts) time(s)"

echo "--- node-b relabelled to match, then a new artifact for both"
kube_admin label node node-b wasm=true >/dev/null
kube_wait_for 90 labelled b demo || fail "node-b never got the demo label: $(agent_log b | tail -n 30)"
shim_object demo v2 '{wasm: "true"}' | kube_admin apply -f - >/dev/null
for letter in a b; do
    wait_state "$letter" demo installed@2
    labelled "$letter" demo || fail "node-$letter lost its label after the upgrade"
    [[ "$(on "$letter" node_handler_binary demo)" == "$T/$letter/var/lib/shimkeeper/bin/containerd-shim-demo-v2" ]] ||
        fail "node-$letter's handler demo points at $(on "$letter" node_handler_binary demo)"
    [[ "$(readlink "$T/$letter/var/lib/shimkeeper/bin/containerd-shim-demo-v2")" == *"$(node_shim_digest demo v2)"* ]] ||
        fail "node-$letter's demo link is not the v2 artifact"
done

echo "--- a change containerd refuses on node-b only"
on b node_unit_dropin 60-refuse-broken "[Service]
ExecStartPre=/bin/sh -c '! grep -rq \"runtimes\\.broken\" $T/b/etc/containerd'"
config_b=$(on b node_config_digest)
shim_object broken v1 '{wasm: "true"}' | kube_admin apply -f - >/dev/null
wait_state a broken installed@1
wait_state b broken failed@1 120
unlabelled b broken || fail "node-b carries the broken label after failing"
on b node_cri_lacks_handler broken || fail "node-b's CRI lists the refused handler"
on b node_cri_has_handler demo || fail "node-b lost demo while rolling back broken"
[[ "$(on b node_config_digest)" == "$config_b" ]] || fail "node-b's config is not as before the failed change"
reason_b=$(kube_admin get node node-b -o json | python3 -S -c 'import json, sys
a = json.load(sys.stdin)["metadata"]["annotations"]["shim.containerd.x-k8s.io/broken"]
print(json.loads(a).get("reason", ""))')
[[ $reason_b == *containerd* ]] || fail "node-b's annotation gives no reason naming containerd: '$reason_b'"
echo "node-b says: failed: $reason_b"
has_warning() {
    kube_admin get events.events.k8s.io -n default -o json | python3 -S -c 'import json, sys
ok = any(e["type"] == "Warning" and e["reason"] == "InstallFailed" and e["regarding"]["kind"] == "Shim"
         and e["regarding"]["name"] == "broken" and "node-b" in e.get("note", "")
         for e in json.load(sys.stdin)["items"])
sys.exit(0 if ok else 1)'
}
kube_wait_for 30 has_warning || fail "no Warning Event about Shim/broken naming node-b"
failed_count() { [[ "$(kube_admin get shim broken -o jsonpath='{.status.nodes.failed}')" == 1 ]]; }
kube_wait_for 60 failed_count || fail "Shim broken's status does not count node-b as failed"
kube_admin delete shim broken --wait=false >/dev/null
on b node_unit_dropin 60-refuse-broken
kube_wait_for 90 unlabelled a broken || fail "node-a kept the broken label after deletion"
# node-a takes its label off first, then changes its config: its annotation goes last.
kube_wait_for 90 state_is a broken "" || fail "node-a still says $(state a broken) about broken"
# node-b's own reconcile of the deletion (it may restart containerd) ends before the snapshot below.
kube_wait_for 90 state_is b broken "" || fail "node-b still says $(state b broken) about broken"

echo "--- the API server stopped: nodes unchanged; back up: converged"
declare -A before
for letter in a b; do
    before[$letter]="$(on "$letter" node_config_digest) $(on "$letter" node_starts)"
done
kube_stop_pid "$KUBE_APISERVER_PID"
# (Captured whole: `| grep -q` would end the pipe early and, under pipefail, fail it.)
unreachable() { [[ "$("$SHIMKEEPER" -c "$T/a/etc/shimkeeper/shimkeeper.toml" status 2>&1)" == *"unreachable since"* ]]; }
kube_wait_for 60 unreachable || fail "status on node-a does not say unreachable: $("$SHIMKEEPER" -c "$T/a/etc/shimkeeper/shimkeeper.toml" status 2>&1)"
"$SHIMKEEPER" -c "$T/a/etc/shimkeeper/shimkeeper.toml" apply >"$T/apply-offline.out" 2>&1 ||
    fail "apply while the API server is down failed: $(cat "$T/apply-offline.out")"
grep -q "Nothing to do" "$T/apply-offline.out" || fail "apply while down did something: $(cat "$T/apply-offline.out")"
for letter in a b; do
    [[ "${before[$letter]}" == "$(on "$letter" node_config_digest) $(on "$letter" node_starts)" ]] ||
        fail "node-$letter changed while the API server was down"
done
# While it is down, etcd's history is compacted (through its JSON gateway; etcdctl is not
# built): the agents' watches come back to resourceVersions that are gone, 410.
# A write outside the API server's keys first: the restarted server serves watches from the
# revision it lists at, and a watch whose resourceVersion is that very revision (its kind was the
# last thing written) would not be too old. After this write no watch's resourceVersion is.
etcd_url=http://127.0.0.1:$KUBE_ETCD_PORT
revision=$(curl -sS -X POST "$etcd_url/v3/kv/put" \
    -d "{\"key\": \"$(printf shimkeeper-test/bump | base64)\", \"value\": \"$(printf 1 | base64)\"}" |
    python3 -S -c 'import json, sys; print(json.load(sys.stdin)["header"]["revision"])') ||
    fail "writing to etcd at $etcd_url failed"
curl -sS -X POST "$etcd_url/v3/kv/compaction" -d "{\"revision\": \"$revision\", \"physical\": true}" \
    >/dev/null || fail "compacting etcd failed"
kube_start_apiserver "$KUBE_APISERVER_PORT" "$KUBE_ETCD_PORT"
kube_wait_for 120 kube_ready || fail "the API server did not come back"
relisted() { grep -q "listed the Shims again after 410 Gone" "$T/a/agent.log"; }
kube_wait_for 90 relisted || fail "node-a's Shim watch did not list again after 410: $(grep -i 'listed\|410' "$T/a/agent.log" | tail -n 3)"
kube_admin label node node-b wasm- >/dev/null
kube_wait_for 120 unlabelled b demo || fail "node-b did not notice its relabelling after the outage"
kube_wait_for 90 state_is b demo "" || fail "node-b still says $(state b demo) about demo"
on b node_cri_lacks_handler demo || fail "node-b still runs demo after it was deselected"
[[ "${before[a]}" == "$(on a node_config_digest) $(on a node_starts)" ]] ||
    fail "node-a changed after its watches listed again (410): nothing should be reinstalled"

echo "--- the Shim deleted: label first, then the handler; a pod's handler waits for the pod"
kube_admin label node node-b wasm=true >/dev/null
wait_state b demo installed@2
kube_wait_for 60 labelled b demo || fail "node-b did not get its demo label back"
on a node_pause_image >/dev/null
pod=$(on a node_cri_client run-pod blocks-demo demo "$(on a printenv NODE_CGROUP_PARENT)")
# Each agent's log from here on is this deletion's alone: an earlier upgrade or removal also
# unlabels and restarts, and must not stand in for it (uninstall_order.py).
from_a=$(wc -l <"$T/a/agent.log")
from_b=$(wc -l <"$T/b/agent.log")
kube_admin delete shim demo --wait=false >/dev/null
kube_wait_for 90 state_is b demo "" || fail "node-b still says $(state b demo) about demo"
unlabelled b demo || fail "node-b kept its demo label"
on b node_cri_lacks_handler demo || fail "node-b's CRI still lists demo"
python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/uninstall_order.py" "$T/b/agent.log" "$from_b" node-b demo ||
    fail "node-b's removal of demo did not take the label off first (exit $?)"

# node-a: a pod sandbox still runs on handler demo: the label goes, the handler stays.
reason() {
    kube_admin get node "node-$1" -o json | python3 -S -c 'import json, sys
a = json.load(sys.stdin)["metadata"].get("annotations", {}).get("shim.containerd.x-k8s.io/" + sys.argv[1])
print("" if a is None else json.loads(a).get("reason", ""))' "$2"
}
blocked_a() { [[ "$(state a demo)" == removing@* ]] && [[ "$(reason a demo)" == "blocked by 1 pod(s) on handler demo: "* ]]; }
kube_wait_for 90 blocked_a || fail "node-a says '$(state a demo)' ($(reason a demo)) about demo, not removing: blocked by 1 pod(s)"
unlabelled a demo || fail "node-a kept its demo label while its removal waits"
on a node_cri_has_handler demo || fail "node-a's handler demo went while a pod sandbox runs on it"
blocked_event() {
    kube_admin get events.events.k8s.io -n default -o json | python3 -S -c 'import json, sys
ok = any(e["type"] == "Warning" and e["reason"] == "RemovalBlocked" and e["regarding"]["kind"] == "Shim"
         and e["regarding"]["name"] == "demo" and "node-a" in e.get("note", "")
         and "blocked by 1 pod(s)" in e.get("note", "") for e in json.load(sys.stdin)["items"])
sys.exit(0 if ok else 1)'
}
kube_wait_for 30 blocked_event || fail "no Warning Event RemovalBlocked about Shim/demo naming node-a"
waits_for_a() {
    [[ "$(kube_admin get shim demo -o jsonpath='{.status.conditions[?(@.type=="Progressing")].message}')" == *"node-a (removing: blocked by 1 pod(s)"* ]]
}
kube_wait_for 60 waits_for_a ||
    fail "Shim demo's status does not name node-a and its pods: $(kube_admin get shim demo -o jsonpath='{.status.conditions}')"
status_a=$("$SHIMKEEPER" -c "$T/a/etc/shimkeeper/shimkeeper.toml" status 2>&1) || true
[[ $status_a == *"removal of demo waits: blocked by 1 pod(s) on handler demo"* ]] ||
    fail "status on node-a does not say the removal waits: $status_a"
on a node_cri_client stop-pod "$pod" >/dev/null
on a node_cri_client remove-pod "$pod" >/dev/null
kube_wait_for 90 state_is a demo "" || fail "node-a still says $(state a demo) about demo after its pod went"
on a node_cri_lacks_handler demo || fail "node-a's CRI still lists demo"
python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/uninstall_order.py" "$T/a/agent.log" "$from_a" node-a demo ||
    fail "node-a's removal of demo did not take the label off first (exit $?)"
gone() { ! kube_admin get "$1" >/dev/null 2>&1; }
kube_wait_for 60 gone shim/demo || fail "Shim demo is still there: $(kube_admin get shim demo -o yaml)"
gone runtimeclass/demo || fail "RuntimeClass demo outlived its Shim"
kube_wait_for 60 gone shim/broken || fail "Shim broken is still there"
echo "ok: two nodes driven through kubectl alone"
