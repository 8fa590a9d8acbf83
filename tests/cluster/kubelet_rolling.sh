#!/usr/bin/env bash
# A refusal that keeps a node out of a rollout is visible. One real sandboxed node whose agent (a
# Type=notify unit) uses a kubelet-style client certificate, the coordinator running, and a
# rolling Shim (maxUpdate 1) selecting the node. NodeRestriction refuses the kubelet's credential
# every Lease outside kube-node-lease, so the agent cannot watch the slots granted to it:
#   - within a minute the Shim's Progressing condition (reason Refused) names node-a and the API
#     server's message;
#   - the node's slot request on its Node carries the refusal, the agent's log and status.json
#     say it, and `shimkeeper status` prints it;
#   - nothing is installed.
# Then deploy/ applied again, but a test policy refuses node-a's take of its grant on its own Node
# (the held_demo annotation; the take goes with the `installing` report, which is refused with
# it, and is then tried on its own): within a minute the Shim names node-a, the take and the
# policy's message (from the node's NodeWriteRefused Events), status.json's waiting and
# `shimkeeper status` say it, and nothing is installed. With the policy gone the kubelet's credential rolls:
# installed, `status` no longer says it waits, a NodeWriteAccepted Event, Progressing Complete.
# seconds-about: 120
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_shim.sh"
kube_require_peers
node_reexec_in_namespace "$@"
sk_init
kube_up "$T/kube"
node_shim_serve
node_shim_artifact demo v1

kube_create_node node-a wasm=true
kubeconfig=$(kube_node_cert_kubeconfig node-a)
# An older deploy/: the kubelet's group may not read the slot Leases.
kube_admin -n shimkeeper-system patch rolebinding shimkeeper-node-leases --type json \
    -p '[{"op": "remove", "path": "/subjects/1"}]' >/dev/null
[[ "$(kube_admin -n shimkeeper-system get rolebinding shimkeeper-node-leases -o jsonpath='{.subjects[*].name}')" == shimkeeper-node ]] ||
    fail "the RoleBinding still names the kubelets' group"
kube_wait_for 30 bash -c "! kubectl --kubeconfig '$kubeconfig' auth can-i watch leases.coordination.k8s.io -n shimkeeper-system" ||
    fail "node-a may still watch the slot Leases"
node_up "$T/a"
agent_log=$NODE_DIR/log/agent.log
status_json=$NODE_DIR/run/status.json
node_agent_start_in_cluster "$kubeconfig" --status-file "$status_json"

coordinator_log=$T/coordinator.log
cat >"$T/coordinator.toml" <<TOML
[kube]
kubeconfig = "$(kube_kubeconfig coordinator)"
TOML
"$SHIMKEEPER" -c "$T/coordinator.toml" --log-level debug coordinate --identity coord-a \
    >"$coordinator_log" 2>&1 &
sk_track $!

kube_shim_yaml demo "$SERVER_URL/demo-v1.tar.gz" "$(node_shim_digest demo v1)" \
    "  nodeSelector: {wasm: \"true\"}
  rolloutStrategy: {type: rolling, rolling: {maxUpdate: 1}}" | kube_admin apply -f - >/dev/null

progressing() {
    kube_admin get shim demo -o json | python3 -S -c 'import json, sys
for c in json.load(sys.stdin).get("status", {}).get("conditions", []):
    if c["type"] == "Progressing":
        print(c["reason"] + ": " + c["message"])'
}
refused_in_status() { [[ "$(progressing)" == "Refused: "*"node-a ("*"HTTP 403"* ]]; }
kube_wait_for 60 refused_in_status ||
    fail "the Shim's status does not name node-a and the refusal within a minute: $(progressing); the agent: $(tail -n 20 "$agent_log")"
echo "Shim's Progressing: $(progressing)"
[[ "$(progressing)" == *"watching its rollout slot Leases in namespace shimkeeper-system"* ]] ||
    fail "the status does not say which request was refused: $(progressing)"

requests=$(kube_admin get node node-a -o jsonpath='{.metadata.annotations.shim\.containerd\.x-k8s\.io/slot_requests}')
[[ $requests == *'"refused":"watching its rollout slot Leases'*'HTTP 403'* ]] ||
    fail "node-a's slot request does not carry the refusal: $requests"
grep -q "rollout: the API server refuses watching its rollout slot Leases" "$agent_log" ||
    fail "the agent's log does not say it: $(tail -n 20 "$agent_log")"
said_waiting() { python3 -S -c 'import json, sys
print(json.load(open(sys.argv[1])).get("result", {}).get("waiting", {}).get("demo", ""))' "$status_json"; }
waiting_refused() { [[ "$(said_waiting)" == "the API server refuses watching its rollout slot Leases"*"HTTP 403"*"deploy/ lets node identities read"* ]]; }
kube_wait_for 30 waiting_refused || fail "status.json's waiting for demo: $(said_waiting)"
expect_exit 0 ski status
expect_output_contains "REFUSED: the API server refuses this node watching its rollout slot Leases in namespace shimkeeper-system: HTTP 403"
expect_output_contains "this node asks for a slot since"
node_cri_lacks_handler demo || fail "demo was installed although no slot could be taken"
echo "ok: the refusal shows on the Shim, the Node, the agent's log and status"

echo "--- deploy/ applied again, but a policy refuses node-a's take of its grant on its own Node"
kube_admin apply -f - >/dev/null <<'YAML'
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: test-no-slot-for-node-a}
spec:
  failurePolicy: Fail
  matchConstraints:
    resourceRules:
      - {apiGroups: [""], apiVersions: ["v1"], operations: ["UPDATE"], resources: ["nodes"]}
  matchConditions:
    - {name: node-a, expression: "request.userInfo.username == 'system:node:node-a'"}
  variables:
    - {name: key, expression: "'shim.containerd.x-k8s.io/held_demo'"}
  validations:
    - expression: >-
        !has(object.metadata.annotations) || !(variables.key in object.metadata.annotations) ||
        (has(oldObject.metadata.annotations) && variables.key in oldObject.metadata.annotations &&
         oldObject.metadata.annotations[variables.key] == object.metadata.annotations[variables.key])
      message: "the test's policy keeps node-a from taking a rollout slot"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: test-no-slot-for-node-a}
spec: {policyName: test-no-slot-for-node-a, validationActions: [Deny]}
YAML
policy_refuses() {
    ! kubectl --kubeconfig "$kubeconfig" annotate node node-a --dry-run=server \
        shim.containerd.x-k8s.io/held_demo=probe >/dev/null 2>&1
}
kube_wait_for 30 policy_refuses || fail "the test's policy does not refuse node-a's held_demo"
kube_admin apply -f "$SHIMKEEPER_SOURCE_DIR/deploy/31-role-leases.yaml" >/dev/null
take_refused_in_status() {
    [[ "$(progressing)" == "Refused: "*"node-a (the API server refuses taking rollout slot demo-slot-"*"the test's policy keeps node-a from taking a rollout slot"* ]]
}
kube_wait_for 60 take_refused_in_status ||
    fail "the Shim's status does not name node-a and the refused take within a minute: $(progressing); the agent: $(tail -n 20 "$agent_log")"
echo "Shim's Progressing: $(progressing)"
write_events() { # REASON: the node agents' Events of that reason about Shim demo, one per line
    kube_admin get events -n default --field-selector "reason=$1,involvedObject.name=demo" -o json |
        jq -r '.items[] | "\(.reportingInstance) \(.action) \(.message)"'
}
grep -q '^shimkeeper-node-a HoldSlot node node-a: the API server refuses taking rollout slot demo-slot-' <<<"$(write_events NodeWriteRefused)" ||
    fail "no NodeWriteRefused Event from node-a about the take: $(write_events NodeWriteRefused)"
node_cri_lacks_handler demo || fail "demo was installed although node-a could not take its slot"
take_refused_waiting() { [[ "$(said_waiting)" == *"taking rollout slot demo-slot-"*"the test's policy keeps node-a from taking a rollout slot"* ]]; }
kube_wait_for 30 take_refused_waiting || fail "status.json's waiting for demo: $(said_waiting)"
status_text() { ski status --status-file "$status_json" 2>&1 || true; }
[[ "$(status_text)" == *"waiting: demo: "*"taking rollout slot demo-slot-"*"the test's policy keeps node-a from taking a rollout slot"* ]] ||
    fail "shimkeeper status does not print the refused take: $(status_text | tail -n 8)"
echo "ok: the refused take shows on the Shim, in an Event from node-a and in shimkeeper status"

echo "--- the policy gone: the kubelet's credential rolls, with nothing minted"
kube_admin delete validatingadmissionpolicybinding test-no-slot-for-node-a >/dev/null
kube_admin delete validatingadmissionpolicy test-no-slot-for-node-a >/dev/null
leases_before=$(kube_admin get leases -n shimkeeper-system -o json |
    python3 -S -c 'import json, sys; print(len(json.load(sys.stdin)["items"]))')
installed() { [[ "$(kube_admin get node node-a -o jsonpath='{.metadata.labels.shim\.containerd\.x-k8s\.io/demo}')" == demo ]]; }
kube_wait_for 120 installed ||
    fail "node-a did not install demo with its kubelet credential: $(progressing); $(tail -n 20 "$agent_log")"
node_cri_has_handler demo || fail "node-a is labelled but its CRI lacks handler demo"
# Empty output would not say "waiting" either: the Daemon part must be there, converged.
no_longer_waiting() {
    local text
    text=$(status_text)
    [[ $text == *"Daemon: converged"* && $text != *"waiting: demo"* ]]
}
kube_wait_for 30 no_longer_waiting || fail "shimkeeper status does not say the daemon converged with demo no longer waiting: $(status_text | tail -n 8)"
held=$(kube_admin get node node-a -o jsonpath='{.metadata.annotations.shim\.containerd\.x-k8s\.io/held_demo}')
[[ $held == *'"lease":"demo-slot-0"'* && $held == *'"done":true'* ]] ||
    fail "node-a's Node does not say it took and released demo-slot-0: $held"
slot_gone() { ! kube_admin get lease demo-slot-0 -n shimkeeper-system >/dev/null 2>&1; }
kube_wait_for 30 slot_gone || fail "the coordinator did not free demo-slot-0 after node-a released it"
grep -q "coordinator: freed rollout slot Lease demo-slot-0: released" "$coordinator_log" ||
    fail "the coordinator's log does not say it freed the released slot"
grep -q "rollout: took slot demo-slot-0 for Shim/demo generation 1" "$agent_log" ||
    fail "the agent's log does not say it took the slot"
accepted() { grep -q '^shimkeeper-node-a HoldSlot ' <<<"$(write_events NodeWriteAccepted)"; }
kube_wait_for 30 accepted || fail "node-a did not say its HoldSlot write is accepted again: $(write_events NodeWriteAccepted)"
complete() { [[ "$(progressing)" == "Complete: "* ]]; }
kube_wait_for 30 complete || fail "the Shim's Progressing: $(progressing)"
echo "ok: node-a took, used and released its grant on its own Node: demo installed (${leases_before} Leases before)"
echo "PASS: the refusal shows on the Shim, the Node, the agent's log and status; the kubelet's credential rolls"
