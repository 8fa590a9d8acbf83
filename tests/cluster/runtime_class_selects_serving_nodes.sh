#!/usr/bin/env bash
# At every instant, every node the Shim's RuntimeClass selects serves RuntimeClass.handler in CRI.
# Two real sandboxed nodes (systemd --user + containerd each), a coordinator, and a recorder
# (tests/support/rc_invariant.py) of the RuntimeClass's and the Nodes' watch events and of each
# node's CRI handler list, asked over and over, through the whole life of Shim `inv` (rolling,
# maxUpdate 1, a download of about 2 s); every CRI answer given while the RuntimeClass selected that
# node is judged:
#   - install with handler inv1;
#   - a handler change to inv2: the RuntimeClass is replaced at once while one node waits for its
#     slot still serving inv1; that node must not be selected until it serves inv2;
#   - a plain upgrade (handler inv2 kept, a new artifact): each node restarts containerd in turn;
#   - a handler change to inv3 that node-b's containerd refuses: the rollout halts, node-b rolls
#     back to inv2 (and node-a, if it went first, serves inv3);
#   - resumed (node-b fixed, the failed slot deleted): both serve inv3;
#   - the Shim deleted: both uninstall.
# The recording must cover each phase (both nodes selected while serving the phase's
# handler; a labelled node left out while the RuntimeClass named inv2 and inv3), CRI must have
# answered for nearly every selected node sampled, and no sample may show a violation.
# runtime_class_checks_fail.sh shows the checker failing on a broken agent.
# seconds-about: 60
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_shim.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/coordinator_process.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/rc_testbed.sh"
kube_require_peers
node_reexec_in_namespace "$@"
sk_init
kube_up "$T/kube"
node_shim_serve
node_shim_artifact inv v1
node_shim_artifact inv v2
rate=$(($(stat -c %s "$T/artifacts/inv-v1.tar.gz") / 2))

kube_create_node node-a wasm=true
kube_create_node node-b wasm=true
coordinator_start coord-1
rc_node_start a
rc_node_start b
rc_nodes_ready a b
rc_record wasm-inv

# shim_yaml HANDLER [VARIANT]: Shim inv with that handler and slow artifact (v1), maxUpdate 1.
shim_yaml() {
    kube_shim_yaml inv "$SERVER_URL/slow/$rate/inv-${2:-v1}.tar.gz" "$(node_shim_digest inv "${2:-v1}")" \
        "  handler: $1
  runtimeClass: {name: wasm-inv}
  nodeSelector: {wasm: \"true\"}
  rolloutStrategy: {rolling: {maxUpdate: 1}}"
}
state() {
    kube_admin get node "node-$1" -o jsonpath='{.metadata.annotations.shim\.containerd\.x-k8s\.io/inv}' |
        python3 -S -c 'import json, sys; t = sys.stdin.read(); s = json.loads(t) if t else {}; print("%s@%s" % (s.get("state"), s.get("generation")))'
}
state_is() { [[ "$(state "$1")" == "$2" ]]; }
both_at() { state_is a "installed@$1" && state_is b "installed@$1"; }
samples() { grep -c '"kind": "cri"' "$T/samples.jsonl" 2>/dev/null || true; }
# more_samples N: waits until the recorder has N more CRI answers than now.
samples_reach() { (($(samples) >= $1)); }
more_samples() {
    kube_wait_for 60 samples_reach $(($(samples) + $1)) ||
        fail "the sampler stopped sampling: $(tail -n 5 "$T/sampler.err")"
}
halted() { [[ "$(kube_admin get shim inv -o jsonpath='{.status.conditions[?(@.type=="RolloutHalted")].status}')" == True ]]; }
wait_for() { # SECONDS WHAT CMD...
    local seconds=$1 what=$2
    shift 2
    kube_wait_for "$seconds" "$@" ||
        fail "$what: node-a $(state a), node-b $(state b); $(tail -n 15 "$T/a/agent.log") $(tail -n 15 "$T/b/agent.log")"
}
kube_wait_for 60 samples_reach 1 || fail "the recorder recorded nothing: $(cat "$T/sampler.err")"

phase() { python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/rc_invariant.py" phase "$T/samples.jsonl" "$1"; }

echo "--- install, handler inv1"
phase install
shim_yaml inv1 | kube_admin apply -f - >/dev/null
wait_for 120 "generation 1 did not reach both nodes" both_at 1
more_samples 10

echo "--- a handler change to inv2: one node at a time, the RuntimeClass replaced at once"
phase handler-change
shim_yaml inv2 | kube_admin apply -f - >/dev/null
wait_for 120 "generation 2 did not reach both nodes" both_at 2
more_samples 10

echo "--- a plain upgrade: handler inv2 kept, a new artifact"
phase upgrade
shim_yaml inv2 v2 | kube_admin apply -f - >/dev/null
wait_for 120 "generation 3 did not reach both nodes" both_at 3
more_samples 10

echo "--- a handler change to inv3 that node-b's containerd refuses: halted"
phase halt
(
    source "$T/b/node.env"
    node_unit_dropin 60-refuse-inv3 "[Service]
ExecStartPre=/bin/sh -c '! grep -rq \"runtimes\\.inv3\\]\\|runtimes\\.\\\"inv3\\\"\\]\\|runtimes\\.inv3\$\" $T/b/etc/containerd'"
)
shim_yaml inv3 v2 | kube_admin apply -f - >/dev/null
wait_for 120 "the rollout of generation 4 did not halt" halted
wait_for 60 "node-b did not report its failure" state_is b failed@4
(source "$T/b/node.env" && node_cri_has_handler inv2) || fail "node-b does not serve inv2 after its rollback"
more_samples 20

echo "--- resumed: node-b fixed, its failed slot deleted"
phase resume
(source "$T/b/node.env" && node_unit_dropin 60-refuse-inv3)
for lease in $(kube_admin -n shimkeeper-system get leases -o name | grep '/inv-slot-'); do
    kube_admin -n shimkeeper-system delete "$lease" >/dev/null
done
wait_for 120 "generation 4 did not reach both nodes after the resume" both_at 4
more_samples 10

echo "--- the Shim deleted"
phase uninstall
kube_admin delete shim inv --wait=false >/dev/null
gone() { ! kube_admin get shim inv >/dev/null 2>&1; }
wait_for 120 "the Shim was not finalized" gone
more_samples 5
touch "$T/stop-sampling"
wait "$sampler" || true

# A stretch belongs to the phase it began in: node-a, if it went first, serves inv3 since the halt.
python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/rc_invariant.py" check "$T/samples.jsonl" \
    --seen install@inv1:node-a --seen install@inv1:node-b \
    --seen handler-change@inv2:node-a --seen handler-change@inv2:node-b \
    --seen upgrade@inv2:node-a --seen upgrade@inv2:node-b \
    --seen inv3:node-a --seen resume@inv3:node-b --excluded inv2 --excluded inv3 ||
    fail "a RuntimeClass selected a node that did not serve its handler, or the recording missed a phase"
echo "ok: install, handler change, upgrade, halt, resume and uninstall: every node RuntimeClass wasm-inv selected served its handler"
