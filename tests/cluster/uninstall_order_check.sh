#!/usr/bin/env bash
# A test of the tests. two_nodes.sh proves "the label goes before the handler" on a Shim's deletion
# with tests/support/uninstall_order.py, reading that deletion's own log lines. Here the agent runs
# a deliberately broken build (SHIMKEEPER_FAULT_SWITCH= handler-before-label: the label comes off
# only after containerd dropped the handler) and the same check must say so: exit 1 (order broken),
# not 0 (pass) nor 2 (nothing recorded).
# seconds-about: 35
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_shim.sh"
kube_require_peers
node_reexec_in_namespace "$@"
sk_init
"$SHIMKEEPER" -o json version | grep -q '"handler-before-label"' ||
    kube_skip "this build has no fault injection (SHIMKEEPER_FAULT_INJECTION=OFF)"
kube_up "$T/kube"
node_shim_serve
node_shim_artifact demo v1
kube_create_node node-a wasm=true

SHIMKEEPER_FAULT_SWITCH=handler-before-label \
    bash "$SHIMKEEPER_SOURCE_DIR/tests/support/cluster_node.sh" "$T/a" node-a \
    "$(kube_node_token_kubeconfig node-a)" >"$T/a.out" 2>&1 &
sk_track $!
agent_log() { tail -n 30 "$T/a/agent.log" 2>/dev/null; }
agent_committed() {
    python3 -S -c 'import json, sys
r = json.load(open(sys.argv[1])).get("result") or {}
sys.exit(0 if r.get("result") == "committed" else 1)' "$T/a/status.json" 2>/dev/null
}
kube_wait_for 60 test -e "$T/a/ready" || fail "node a did not come up: $(cat "$T/a.out")"
kube_wait_for 60 agent_committed || fail "the agent did not converge: $(agent_log)"
on_a() { (
    # shellcheck disable=SC1090
    source "$T/a/node.env"
    "$@"
); }
label() { kube_admin get node node-a -o jsonpath='{.metadata.labels.shim\.containerd\.x-k8s\.io/demo}'; }
labelled() { [[ "$(label)" == demo ]]; } # the label names the handler
annotated() { [[ -n "$(kube_admin get node node-a -o jsonpath='{.metadata.annotations.shim\.containerd\.x-k8s\.io/demo}')" ]]; }
not_annotated() { ! annotated; }

kube_shim_yaml demo "$SERVER_URL/demo-v1.tar.gz" "$(node_shim_digest demo v1)" \
    '  nodeSelector: {wasm: "true"}' | kube_admin apply -f - >/dev/null
kube_wait_for 90 labelled || fail "node-a never got the demo label: $(agent_log)"
on_a node_cri_has_handler demo || fail "test setup: node-a is labelled but CRI lacks handler demo"

from=$(wc -l <"$T/a/agent.log")
kube_admin delete shim demo --wait=false >/dev/null
kube_wait_for 90 not_annotated || fail "node-a did not finish removing demo: $(agent_log)"
on_a node_cri_lacks_handler demo || fail "test setup: node-a's CRI still lists demo"

code=0
python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/uninstall_order.py" "$T/a/agent.log" "$from" \
    node-a demo >"$T/check.out" || code=$?
echo "the check says (exit $code): $(cat "$T/check.out")"
((code == 1)) || fail "the label-before-handler check did not catch the reversed uninstall order" \
    "(exit $code, want 1): $(cat "$T/check.out")"
echo "ok: the uninstall-order check fails on a build that removes the handler before the label"
