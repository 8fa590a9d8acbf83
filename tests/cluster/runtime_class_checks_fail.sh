#!/usr/bin/env bash
# The RuntimeClass checker can fail, and a label that cannot come off holds a handler change back.
# Two real sandboxed nodes, each agent deliberately broken (SHIMKEEPER_FAULT_SWITCH, fault-injection
# builds), a coordinator and rc_invariant.py's recorder, through Shim inv's install (handler inv1)
# and a handler change to inv2 (recreate, downloads of about 2 s):
#   - node-a runs `label-before-serving`: it labels the Shim with the handler it is about to
#     install before containerd serves it; rc_invariant.py check must fail, naming node-a;
#   - node-b runs `label-patch-fails`: its Node report before a change is never sent. The install
#     (no label yet) goes on; the handler change must not start while the inv1 label stays: the
#     node says why (an InstallFailed Event: "taking the label off before changing inv from
#     handler inv1 to handler inv2"), its report after the refusal takes the label off, and the
#     next try installs inv2. rc_invariant.py finds no violation on node-b.
# seconds-about: 50
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_shim.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/coordinator_process.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/rc_testbed.sh"
"$SHIMKEEPER" -o json version | grep -q '"label-before-serving"' ||
    { echo "skip: $SHIMKEEPER is not a -DSHIMKEEPER_FAULT_INJECTION=ON build"; exit 77; }
kube_require_peers
node_reexec_in_namespace "$@"
sk_init
kube_up "$T/kube"
node_shim_serve
node_shim_artifact inv v1
rate=$(($(stat -c %s "$T/artifacts/inv-v1.tar.gz") / 2))

kube_create_node node-a wasm=true
kube_create_node node-b wasm=true
coordinator_start coord-1
declare -A broken=([a]=label-before-serving [b]=label-patch-fails)
# node-a's transactions linger 1.5 s after their first change (SHIMKEEPER_FAULT_RUN): its label
# runs ahead of containerd for that long, not only for the restart (when CRI does not answer).
declare -A linger=([a]="links:sleep 1.5" [b]="")
for letter in a b; do
    rc_node_start "$letter" SHIMKEEPER_FAULT_SWITCH="${broken[$letter]}" SHIMKEEPER_FAULT_RUN="${linger[$letter]}"
done
rc_nodes_ready a b
rc_record wasm-inv

shim_yaml() {
    kube_shim_yaml inv "$SERVER_URL/slow/$rate/inv-v1.tar.gz" "$(node_shim_digest inv v1)" \
        "  handler: $1
  runtimeClass: {name: wasm-inv}
  nodeSelector: {wasm: \"true\"}
  rolloutStrategy: {type: recreate}"
}
state() {
    kube_admin get node "node-$1" -o jsonpath='{.metadata.annotations.shim\.containerd\.x-k8s\.io/inv}' |
        python3 -S -c 'import json, sys; t = sys.stdin.read(); s = json.loads(t) if t else {}; print("%s@%s" % (s.get("state"), s.get("generation")))'
}
both_at() { [[ "$(state a)" == "installed@$1" && "$(state b)" == "installed@$1" ]]; }
wait_for() { # SECONDS WHAT CMD...
    local seconds=$1 what=$2
    shift 2
    kube_wait_for "$seconds" "$@" ||
        fail "$what: node-a $(state a), node-b $(state b); $(tail -n 15 "$T/a/agent.log") $(tail -n 15 "$T/b/agent.log")"
}
recorded() { grep -q '"kind": "cri"' "$T/samples.jsonl"; }
kube_wait_for 60 recorded || fail "the recorder recorded nothing: $(cat "$T/sampler.err")"

echo "--- install, handler inv1"
shim_yaml inv1 | kube_admin apply -f - >/dev/null
wait_for 120 "generation 1 did not reach both nodes" both_at 1
grep -q "SHIMKEEPER_FAULT_SWITCH=label-patch-fails" "$T/b/agent.log" || fail "node-b's agent did not run broken"

echo "--- a handler change to inv2"
shim_yaml inv2 | kube_admin apply -f - >/dev/null
wait_for 120 "generation 2 did not reach both nodes" both_at 2
(source "$T/b/node.env" && node_cri_has_handler inv2) || fail "node-b does not serve inv2"
refusal="taking the label off before changing inv from handler inv1 to handler inv2"
kube_admin get events -A -o json | grep -q "$refusal" ||
    fail "node-b changed its handler without saying it could not take the inv1 label off first: $(grep -i label "$T/b/agent.log" | tail -n 5)"
echo "ok: node-b, its label stuck, did not change until it came off: an Event says '$refusal'"
touch "$T/stop-sampling"
wait "$sampler" || true

if out=$(python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/rc_invariant.py" check "$T/samples.jsonl" 2>&1); then
    fail "rc_invariant.py passed although node-a labels before serving: $out"
fi
echo "$out" | sed 's/^/    /'
grep -q "violation: .* selects node-a " <<<"$out" || fail "rc_invariant.py failed without naming node-a: $out"
! grep -q "violation: .* selects node-b " <<<"$out" || fail "node-b was selected without serving: $out"
echo "ok: rc_invariant.py fails on node-a, labelled before it served; no violation on node-b"
