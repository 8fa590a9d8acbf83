#!/usr/bin/env bash
# A deleted Shim stays (our finalizer) while any Node still carries its label or its annotation,
# whatever its selector says now; once the last node has cleared both (each node's agent removes its
# label first, then the shim, then its annotation: here the admin does it for them), the coordinator
# deletes the Shim's RuntimeClass, removes the finalizer, and the object is gone. The Shim's status
# names every node it waits for and what each says; a node that never uninstalls (powered off: its
# agent never acts) holds the Shim until its Node object is deleted (`kubectl delete node`), which
# releases it.
# seconds-about: 40
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_coordinator.sh"
coord_testbed

coord_lead node-a
kube_create_node node-a wasm=true
kube_create_node node-b wasm=true
kube_create_node node-c wasm=true
shim_apply spin '  nodeSelector: {wasm: "true"}'
wait_eq 30 spin kube_admin get runtimeclass spin -o jsonpath='{.handler}'
wait_eq 30 '["shim.containerd.x-k8s.io/uninstall"]' shim_get spin .metadata.finalizers
node_report node-a spin installed
node_report node-b spin installed
node_report node-c spin installed
wait_eq 30 "True" shim_condition spin Ready status
pass "Shim spin installed on three nodes; RuntimeClass spin (the default name: the Shim's)"

kube_admin delete shim spin --wait=false >/dev/null
wait_eq 30 "Deleting" shim_condition spin Ready reason
[[ $(shim_condition spin Progressing message) == *"by 3 node(s): node-a (installed), node-b (installed), node-c (installed)" ]] ||
    fail "Progressing says: $(shim_condition spin Progressing message)"
pass "deleted: the Shim stays while 3 nodes carry it, and its status names them"

node_forget node-a spin
wait_eq 30 "the shim is still carried (label or annotation) by 2 node(s): node-b (installed), node-c (installed)" \
    shim_condition spin Progressing message
kube_admin get runtimeclass spin >/dev/null || fail "the RuntimeClass went while node-b carries the shim"
# node-b takes its label off first, then (after removing the shim) its annotation.
passes=$(coord_passes node-a)
kube_admin label node node-b shim.containerd.x-k8s.io/spin- >/dev/null
node_report node-b spin removing
coord_wait_passes node-a "$passes"
kube_admin get shim spin >/dev/null || fail "the Shim went while node-b still has its annotation"
kube_admin get runtimeclass spin >/dev/null || fail "the RuntimeClass went while node-b still has the annotation"
pass "node-a cleared; node-b's annotation alone still holds the Shim and its RuntimeClass"

kube_admin annotate node node-b shim.containerd.x-k8s.io/spin- >/dev/null
wait_eq 30 "the shim is still carried (label or annotation) by 1 node(s): node-c (installed)" \
    shim_condition spin Progressing message
passes=$(coord_passes node-a)
kube_admin label node node-a touched=1 >/dev/null # any change: one more pass
coord_wait_passes node-a "$passes"
kube_admin get shim spin >/dev/null || fail "the Shim went while node-c still carries it"
pass "node-c never uninstalls (its agent does not act): the Shim stays Terminating, naming node-c"

# The documented release for a node that is gone for good.
kube_admin delete node node-c >/dev/null
wait_eq 30 "" kube_admin get shims -o name
wait_eq 30 "" kube_admin get runtimeclasses -o name
wait_eq 30 "Normal" kube_admin get events.events.k8s.io -n default \
    -o jsonpath='{.items[?(@.reason=="Finalized")].type}'
pass "no node carries it: RuntimeClass deleted, finalizer removed, Shim gone, Finalized Event"
echo "PASS"
