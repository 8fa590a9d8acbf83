#!/usr/bin/env bash
# A RuntimeClass that shimkeeper did not create is never changed nor deleted. The Shim that names it
# says so (RuntimeClassReady=False, reason Conflict, and a Warning Event); deleting that Shim leaves
# the foreign RuntimeClass alone; once the foreign one is gone, the coordinator creates its own. Its
# own RuntimeClass follows the Shim: a changed handler (immutable in the API) replaces it, a new
# name leaves no old one behind, and a handler a RuntimeClass cannot carry says InvalidSpec.
# seconds-about: 40
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_coordinator.sh"
coord_testbed

kube_create_node node-a
kube_admin create -f - >/dev/null <<'YAML'
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: wasm-spin, labels: {team: platform}}
handler: someone-elses
YAML
foreign_version=$(kube_admin get runtimeclass wasm-spin -o jsonpath='{.metadata.resourceVersion}')
coord_lead node-a

shim_apply spin '  runtimeClass: {name: wasm-spin}'
wait_eq 30 "False Conflict" shim_get spin '.status.conditions[?(@.type=="RuntimeClassReady")].status} {.status.conditions[?(@.type=="RuntimeClassReady")].reason'
message=$(shim_condition spin RuntimeClassReady message)
[[ $message == *"was not created by shimkeeper"* ]] || fail "the condition says: $message"
[[ $(kube_admin get runtimeclass wasm-spin -o jsonpath='{.metadata.resourceVersion}') == "$foreign_version" ]] ||
    fail "the foreign RuntimeClass was changed"
[[ $(shim_get spin .status.nodes.selected) == 1 ]] || fail "no status counts beside the conflict"
wait_eq 30 "Warning" kube_admin get events.events.k8s.io -n default \
    -o jsonpath='{.items[?(@.reason=="RuntimeClassConflict")].type}'
pass "Conflict: \"$message\", and a Warning Event"

echo "--- deleting the Shim leaves the foreign RuntimeClass alone"
kube_admin delete shim spin --wait=false >/dev/null
wait_eq 30 "" kube_admin get shims -o name
[[ $(kube_admin get runtimeclass wasm-spin -o jsonpath='{.metadata.resourceVersion}') == "$foreign_version" ]] ||
    fail "the foreign RuntimeClass was changed or deleted"
pass "Shim finalized, foreign RuntimeClass untouched"

echo "--- without the foreign one, the coordinator creates its own"
shim_apply spin '  runtimeClass: {name: wasm-spin}'
wait_eq 30 "Conflict" shim_condition spin RuntimeClassReady reason
kube_admin delete runtimeclass wasm-spin >/dev/null
wait_eq 30 "True Ready" shim_get spin '.status.conditions[?(@.type=="RuntimeClassReady")].status} {.status.conditions[?(@.type=="RuntimeClassReady")].reason'
[[ $(kube_admin get runtimeclass wasm-spin -o jsonpath='{.handler}') == spin ]] ||
    fail "the coordinator's RuntimeClass has handler $(kube_admin get runtimeclass wasm-spin -o jsonpath='{.handler}')"
pass "RuntimeClass wasm-spin is shimkeeper's now (handler spin)"

echo "--- a changed handler replaces it; a new name removes the old one"
rc_field() { kube_admin get runtimeclass "$1" --ignore-not-found -o jsonpath="{$2}"; }
old_uid=$(rc_field wasm-spin .metadata.uid)
shim_apply spin '  handler: spin2
  runtimeClass: {name: wasm-spin}'
wait_eq 30 spin2 rc_field wasm-spin .handler
[[ $(rc_field wasm-spin .metadata.uid) != "$old_uid" ]] || fail "the handler changed in place"
shim_apply spin '  handler: spin2
  runtimeClass: {name: wasm-spin-2}'
wait_eq 30 spin2 rc_field wasm-spin-2 .handler
wait_eq 30 "" rc_field wasm-spin .metadata.name
pass "handler spin2: RuntimeClass replaced; renamed to wasm-spin-2: wasm-spin deleted"

echo "--- a handler that is no DNS label: InvalidSpec, the RuntimeClass left as it was"
shim_apply spin '  handler: spin.v2
  runtimeClass: {name: wasm-spin-2}'
wait_eq 30 "False InvalidSpec" shim_get spin '.status.conditions[?(@.type=="RuntimeClassReady")].status} {.status.conditions[?(@.type=="RuntimeClassReady")].reason'
[[ $(rc_field wasm-spin-2 .handler) == spin2 ]] || fail "the RuntimeClass changed for an invalid handler"
pass "InvalidSpec: $(shim_condition spin RuntimeClassReady message)"
echo "PASS"
