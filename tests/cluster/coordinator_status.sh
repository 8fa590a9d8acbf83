#!/usr/bin/env bash
# One elected agent (kube-probe coordinator, the agent identity) keeps every Shim's cluster-wide
# side. Nodes "report" as the admin (annotation + label), standing in for node agents:
#   - a new Shim gets the finalizer, its RuntimeClass (handler, nodeSelector on the installed
#     label, marked as shimkeeper's) and a status counting the selected nodes;
#   - nodes reporting installed / failed move status.nodes, Ready and Progressing; a new
#     generation counts nobody installed until they report it;
#   - progress alone is written in steps: 1 and 3 of 4 nodes installed are not
#     written however long they wait, 2 of 4 and 4 of 4 are;
#   - its RuntimeClass changed or deleted by hand is put back;
#   - idle: passes triggered by irrelevant Node changes write nothing (the Shim's and the
#     RuntimeClass's resourceVersions stay, the write counter stays).
# seconds-about: 60
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_coordinator.sh"
coord_testbed

kube_create_node node-a wasm=true
kube_create_node node-b wasm=true
kube_create_node node-c
coord_lead node-a

echo "--- a new Shim: finalizer, RuntimeClass, status"
shim_apply spin '  handler: spin
  nodeSelector: {wasm: "true"}
  runtimeClass: {name: wasm-spin}'
wait_eq 30 '["shim.containerd.x-k8s.io/uninstall"]' shim_get spin .metadata.finalizers
wait_eq 30 spin kube_admin get runtimeclass wasm-spin -o jsonpath='{.handler}'
rc=$(kube_admin get runtimeclass wasm-spin -o json)
python3 -S - "$rc" <<'PY' || fail "RuntimeClass wasm-spin: $rc"
import json, sys
rc = json.loads(sys.argv[1])
assert rc["scheduling"]["nodeSelector"] == {"shim.containerd.x-k8s.io/spin": "spin", "wasm": "true"}, rc
assert rc["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "shimkeeper", rc
assert rc["metadata"]["annotations"]["containerd.x-k8s.io/shim"] == "spin", rc
assert rc["metadata"]["ownerReferences"][0]["kind"] == "Shim", rc
PY
pass "finalizer and RuntimeClass wasm-spin (handler spin, nodeSelector on the installed label and the Shim's)"
wait_eq 30 "2 0 0 2" shim_get spin '.status.nodes.selected} {.status.nodes.installed} {.status.nodes.failed} {.status.nodes.updating'
wait_eq 10 "False Installing" shim_get spin '.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason'
[[ $(shim_condition spin Progressing status) == True ]] || fail "Progressing is not True"
[[ $(shim_condition spin RuntimeClassReady status) == True ]] || fail "RuntimeClassReady is not True"
[[ $(shim_get spin .status.observedGeneration) == 1 ]] || fail "observedGeneration"
pass "status: 2 selected, 2 updating; Ready False, Progressing True"

echo "--- nodes report"
node_report node-a spin installed
wait_eq 30 "2 1 0 1" shim_get spin '.status.nodes.selected} {.status.nodes.installed} {.status.nodes.failed} {.status.nodes.updating'
node_report node-b spin failed "sha256 mismatch"
wait_eq 30 "2 1 1 0" shim_get spin '.status.nodes.selected} {.status.nodes.installed} {.status.nodes.failed} {.status.nodes.updating'
wait_eq 10 "False InstallFailed" shim_get spin '.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason'
[[ $(shim_condition spin Ready message) == *"node-b (sha256 mismatch)"* ]] ||
    fail "Ready's message does not name the failed node: $(shim_condition spin Ready message)"
[[ $(shim_condition spin Progressing status) == False ]] || fail "Progressing is not False"
pass "one installed, one failed (named in Ready's message)"
ready_since=$(shim_condition spin Ready lastTransitionTime)
node_report node-b spin installed
wait_eq 30 "True Installed" shim_get spin '.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason'
[[ $(shim_get spin .status.nodes.updating) == 0 ]] || fail "updating is not 0"
[[ $(shim_condition spin Progressing reason) == Complete ]] || fail "Progressing is not Complete"
pass "all installed: Ready True (was False since $ready_since), Progressing Complete"

echo "--- idle: irrelevant changes write nothing"
shim_version=$(shim_get spin .metadata.resourceVersion)
rc_version=$(kube_admin get runtimeclass wasm-spin -o jsonpath='{.metadata.resourceVersion}')
passes=$(coord_passes node-a)
writes=$(coord_writes node-a)
for round in 1 2 3; do
    # A label no Shim selects on: the coordinator runs a pass, which finds nothing to do.
    kube_admin label node node-c --overwrite "unrelated=$round" >/dev/null
    coord_wait_passes node-a "$passes"
    passes=$(coord_passes node-a)
done
[[ $(shim_get spin .metadata.resourceVersion) == "$shim_version" ]] || fail "the Shim was written while idle"
[[ $(kube_admin get runtimeclass wasm-spin -o jsonpath='{.metadata.resourceVersion}') == "$rc_version" ]] ||
    fail "the RuntimeClass was written while idle"
[[ $(coord_writes node-a) == "$writes" ]] || fail "writes went from $writes to $(coord_writes node-a) while idle"
pass "3 passes without a write (Shim resourceVersion $shim_version)"

echo "--- a new generation"
kube_admin patch shim spin --type merge -p '{"spec":{"options":{"Debug":"true"}}}' >/dev/null
wait_eq 30 "2 2 0 0 2" shim_get spin '.status.observedGeneration} {.status.nodes.selected} {.status.nodes.installed} {.status.nodes.failed} {.status.nodes.updating'
[[ $(shim_condition spin Ready status) == False ]] || fail "Ready stayed True for generation 2"
node_report node-a spin installed
node_report node-b spin installed
wait_eq 30 "True 2" shim_get spin '.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].observedGeneration'
pass "generation 2: nodes count as installed again only once they report it"

echo "--- progress is written in steps: halfway and done, not every node"
for node in node-d node-e node-f node-g; do kube_create_node "$node" steps=true; done
shim_apply steps '  handler: steps
  nodeSelector: {steps: "true"}'
counts='.status.nodes.selected} {.status.nodes.installed} {.status.nodes.failed} {.status.nodes.updating'
wait_eq 30 "4 0 0 4" shim_get steps "$counts"
# Passes for longer than the coordinator's progress interval (5 s), each after a Node change: a
# count below the next step is never written, however long it has waited.
passes_beyond_the_interval() {
    local until=$((SECONDS + 7)) round=0
    while ((SECONDS < until)); do
        round=$((round + 1))
        passes=$(coord_passes node-a)
        kube_admin label node node-c --overwrite "unrelated=steps-$round" >/dev/null
        coord_wait_passes node-a "$passes"
    done
}
steps_version=$(shim_get steps .metadata.resourceVersion)
node_report node-d steps installed
passes_beyond_the_interval
[[ $(shim_get steps "$counts") == "4 0 0 4" ]] ||
    fail "1 of 4 installed was written before the halfway step: $(shim_get steps "$counts")"
[[ $(shim_get steps .metadata.resourceVersion) == "$steps_version" ]] || fail "the Shim was written below the halfway step"
node_report node-e steps installed
wait_eq 30 "4 2 0 2" shim_get steps "$counts"
node_report node-f steps installed
passes_beyond_the_interval
[[ $(shim_get steps "$counts") == "4 2 0 2" ]] ||
    fail "3 of 4 installed was written before the last step: $(shim_get steps "$counts")"
node_report node-g steps installed
wait_eq 30 "4 4 0 0 True" shim_get steps "$counts"'} {.status.conditions[?(@.type=="Ready")].status'
pass "1 of 4 and 3 of 4 not written; 2 of 4 and 4 of 4 written"

echo "--- the RuntimeClass changed or deleted by hand is put back"
kube_admin patch runtimeclass wasm-spin --type merge \
    -p '{"scheduling":{"nodeSelector":{"shim.containerd.x-k8s.io/spin":null,"wasm":"false"}}}' >/dev/null
wait_eq 30 '{"shim.containerd.x-k8s.io/spin":"spin","wasm":"true"}' kube_admin get runtimeclass wasm-spin -o jsonpath='{.scheduling.nodeSelector}'
kube_admin delete runtimeclass wasm-spin >/dev/null
wait_eq 30 spin kube_admin get runtimeclass wasm-spin -o jsonpath='{.handler}'
pass "patched back, and recreated"
echo "PASS"
