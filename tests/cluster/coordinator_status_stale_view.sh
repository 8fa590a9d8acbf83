#!/usr/bin/env bash
# Each status write of the coordinator names the Shim version it was computed from, so a view behind
# the API server cannot write over a newer status. Without it, a new term whose list came before the
# last term's write landed would write the same conditions again, only their lastTransitionTime a
# second later, one more Shim event for every agent. The coordinator runs with
# SHIMKEEPER_FAULT_SWITCH=shim-view-misses-status (fault-injection builds): its Shim view learns of
# no status write, so each pass after the first computes from the version before it.
#   - the first status is written (Ready False, Installing);
#   - a pass in a later second computes the same conditions from the older version: the API
#     server refuses the write and the coordinator says so; the conditions' lastTransitionTime
#     and the Shim's resourceVersion stay.
# seconds-about: 25
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_coordinator.sh"
"$SHIMKEEPER" -o json version | grep -q '"shim-view-misses-status"' ||
    { echo "skip: $SHIMKEEPER is not a -DSHIMKEEPER_FAULT_INJECTION=ON build"; exit 77; }
coord_testbed

kube_create_node node-a wasm=true
kube_create_node node-b
export SHIMKEEPER_FAULT_SWITCH=shim-view-misses-status
coord_lead node-a
unset SHIMKEEPER_FAULT_SWITCH

shim_apply spin '  handler: spin
  nodeSelector: {wasm: "true"}'
wait_eq 30 "False Installing" shim_get spin '.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].reason'
since=$(shim_condition spin Ready lastTransitionTime)
pass "the first status: Ready False since $since"

# A pass in a later second than that write, so a write from the older version would show in the
# conditions' time as well as in the Shim's version.
later() { [[ $(date -u +%Y-%m-%dT%H:%M:%SZ) > "$since" ]]; }
kube_wait_for 5 later || fail "the clock did not pass $since"
version=$(shim_get spin .metadata.resourceVersion)
passes=$(coord_passes node-a)
kube_admin label node node-b --overwrite unrelated=wake >/dev/null
coord_wait_passes node-a "$passes"
[[ $(shim_condition spin Ready lastTransitionTime) == "$since" ]] ||
    fail "a pass from the older version wrote the conditions again: Ready since $(shim_condition spin Ready lastTransitionTime), was $since"
[[ $(shim_get spin .metadata.resourceVersion) == "$version" ]] ||
    fail "a pass from the older version wrote the Shim: resourceVersion $(shim_get spin .metadata.resourceVersion), was $version"
grep -qF "Shim spin changed since this pass read it" "$KUBE_DIR"/coord-node-a.out "$KUBE_DIR"/coord-node-a.err ||
    fail "the coordinator did not say its write from the older version was refused"
pass "a write from the older version refused: Ready since $since, resourceVersion $version"
echo "PASS"
