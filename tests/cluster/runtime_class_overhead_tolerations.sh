#!/usr/bin/env bash
# A Shim's runtimeClass.overhead.podFixed and runtimeClass.tolerations reach its RuntimeClass as
# written and nothing else (overhead.podFixed, scheduling.tolerations; scheduling.nodeSelector as
# without them); a change patches the same RuntimeClass, a removal removes them, and the API
# server's own spelling of a quantity ("0.25" kept as "250m") costs no write. Bad values are
# refused at admission, in either spelling of runtimeClass, with the field named.
# seconds-about: 40
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_coordinator.sh"
coord_testbed
SHIM_RUNTIME_TYPE=io.containerd.demo.v2
source "$SHIMKEEPER_SOURCE_DIR/tests/support/shim_admission.sh"

echo "--- refused at admission, the field named"
rc() { printf 'runtimeClass:\n  name: kata\n  %s\n%s' "$1" "$good_fetch"; }
refused bad-quantity 'spec.runtimeClass.overhead.podFixed[cpu]: Invalid value' "$(rc 'overhead: {podFixed: {cpu: lots}}')"
refused bad-quantity-text 'an overhead must be a non-negative quantity' "$(rc 'overhead: {podFixed: {cpu: lots}}')"
refused negative-quantity 'an overhead must be a non-negative quantity' "$(rc 'overhead: {podFixed: {memory: -1Mi}}')"
refused bad-resource 'overhead.podFixed names cpu, memory, ephemeral-storage' "$(rc 'overhead: {podFixed: {gpu: "1"}}')"
refused fractional-device 'an extended resource (a domain-prefixed name) counts whole units' \
    "$(rc 'overhead: {podFixed: {example.com/vm: 500m}}')"
refused bad-operator 'spec.runtimeClass.tolerations[0].operator: Unsupported value: "Lt"' \
    "$(rc 'tolerations: [{key: kata, operator: Lt, value: "3"}]')"
refused bad-effect 'spec.runtimeClass.tolerations[0].effect: Unsupported value: "NoRun"' \
    "$(rc 'tolerations: [{key: kata, effect: NoRun}]')"
refused value-with-exists "a toleration's value must be empty when its operator is Exists" \
    "$(rc 'tolerations: [{key: kata, operator: Exists, value: "yes"}]')"
refused seconds-without-noexecute "tolerationSeconds applies only with effect NoExecute" \
    "$(rc 'tolerations: [{key: kata, effect: NoSchedule, tolerationSeconds: 5}]')"
refused bad-key "a toleration's key must be a label key" "$(rc 'tolerations: [{key: "a b"}]')"
refused lower-spelling 'spec.runtimeclass.tolerations[0].operator: Unsupported value: "Lt"' \
    "runtimeclass: {name: kata, tolerations: [{key: kata, operator: Lt}]}
$good_fetch"
pass "bad overheads and tolerations refused, each naming its field"

echo "--- copied into the RuntimeClass as written, nothing added"
kube_create_node node-a pool=kata
coord_lead node-a
rc_json() { kube_admin get runtimeclass kata -o json; }
# rc_is OVERHEAD-JSON TOLERATIONS-JSON: the RuntimeClass's overhead and tolerations exactly, its
# nodeSelector the Shim's and the readiness label.
rc_is() {
    rc_json 2>/dev/null | python3 -S -c '
import json, sys
rc = json.load(sys.stdin)
overhead, tolerations = json.loads(sys.argv[1]), json.loads(sys.argv[2])
assert rc.get("overhead") == overhead, rc.get("overhead")
scheduling = rc["scheduling"]
assert scheduling.get("tolerations") == tolerations, scheduling.get("tolerations")
assert scheduling["nodeSelector"] == {"pool": "kata", "shim.containerd.x-k8s.io/kata": "kata"}, scheduling
assert set(scheduling) <= {"nodeSelector", "tolerations"}, scheduling
' "$1" "$2" 2>/dev/null
}
rc_now() { rc_json | python3 -S -c 'import json, sys; rc = json.load(sys.stdin); print(json.dumps(rc.get("overhead")), json.dumps(rc["scheduling"]))'; }
wait_rc() { kube_wait_for 30 rc_is "$1" "$2" || fail "the RuntimeClass holds $(rc_now 2>&1), not $1 $2"; }
tolerations='[{"key": "example.org/sandbox", "operator": "Exists", "effect": "NoSchedule"}, {"key": "pool", "operator": "Equal", "value": "kata", "effect": "NoExecute", "tolerationSeconds": 30}]'
shim_apply kata "  nodeSelector: {pool: kata}
  runtimeClass:
    name: kata
    overhead: {podFixed: {cpu: \"0.25\", memory: 160Mi}}
    tolerations: $tolerations"
wait_rc '{"podFixed": {"cpu": "250m", "memory": "160Mi"}}' "$tolerations"
wait_eq 30 "True" shim_condition kata RuntimeClassReady status
uid=$(rc_json | python3 -S -c 'import json, sys; print(json.load(sys.stdin)["metadata"]["uid"])')
pass "RuntimeClass kata: overhead cpu 250m (written 0.25) and memory 160Mi, both tolerations"

echo "--- the API server's spelling of the same amount costs no write"
passes=$(coord_passes node-a)
writes=$(coord_writes node-a)
kube_admin label node node-a unrelated=1 >/dev/null
coord_wait_passes node-a "$passes"
passes=$(coord_passes node-a)
kube_admin label node node-a unrelated=2 --overwrite >/dev/null
coord_wait_passes node-a "$passes"
[[ $(coord_writes node-a) == "$writes" ]] ||
    fail "passes with nothing to change wrote $(($(coord_writes node-a) - writes)) times: the RuntimeClass's 250m against the Shim's 0.25"
pass "two passes, no write"

echo "--- a change patches the same RuntimeClass"
changed='[{"key": "example.org/sandbox", "operator": "Exists"}]'
shim_apply kata "  nodeSelector: {pool: kata}
  runtimeClass:
    name: kata
    overhead: {podFixed: {cpu: 500m}}
    tolerations: $changed"
wait_rc '{"podFixed": {"cpu": "500m"}}' "$changed"
[[ $(rc_json | python3 -S -c 'import json, sys; print(json.load(sys.stdin)["metadata"]["uid"])') == "$uid" ]] ||
    fail "the RuntimeClass was replaced, not patched"
pass "overhead cpu 500m only, one toleration, the same RuntimeClass"

echo "--- removed from the Shim, removed from the RuntimeClass"
shim_apply kata "  nodeSelector: {pool: kata}
  runtimeClass: {name: kata}"
wait_rc null null
wait_eq 30 "True" shim_condition kata RuntimeClassReady status
pass "no overhead, no tolerations, the nodeSelector as before"
