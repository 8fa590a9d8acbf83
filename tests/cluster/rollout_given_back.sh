#!/usr/bin/env bash
# A grant its node gave back is never taken again by another process of that node. node-1 (a
# sandbox root, no agent yet) asks for a slot of a rolling Shim (its Node's slot_requests, written
# here as its agent writes them) and the coordinator grants it demo-slot-0. The coordinators are
# then held (SIGSTOP), so that the Lease goes on naming node-1, and node-1's entry says done with
# that grant, as a process of node-1 that gave it back before its first change writes it: having
# seen that, the coordinator frees the slot for the next node whatever a later take of the same
# grant says. `shimkeeper apply` on node-1 must not take that grant: it asks anew and says it
# waits, changing nothing. The entry is written while that apply waits for the node lock (held
# here as a daemon's reconcile holds it while it gives a grant back), after apply read the
# cluster: apply must judge its grants by its Node as it is once it holds the lock. Nor may a
# daemon started on node-1 afterwards take it (its status says it waits). Once the coordinators
# go on, node-1 is granted anew (another grant id) and its daemon installs the Shim.
# seconds-about: 45
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
rollout_testbed
kube_create_node node-1 rollout=yes
rollout_root "$T/roots/node-1" node-1
kube_wait_for 60 coordinator_elected || fail "no coordinator was elected"
kube_shim_yaml demo "$SERVER_URL/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")" \
    "  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: 1}}" | kube_admin apply -f - >/dev/null
uid=$(kube_admin get shim demo -o jsonpath='{.metadata.uid}')
generation=$(kube_admin get shim demo -o jsonpath='{.metadata.generation}')
[[ -n $uid && -n $generation ]] || fail "Shim demo has no uid or generation"
now() { date -u +%Y-%m-%dT%H:%M:%S.%6NZ; }
kube_admin annotate node node-1 --overwrite \
    "shim.containerd.x-k8s.io/slot_requests={\"demo\":{\"generation\":$generation,\"since\":\"$(now)\",\"uid\":\"$uid\"}}" >/dev/null
kube_wait_for 30 rollout_holds node-1 || fail "node-1's request got no grant: $(rollout_slot_holders)"
for pid in "${COORDINATOR_PIDS[@]}"; do kill -STOP "$pid"; done
grant_of() { # the grant id of demo-slot-0 (the Lease's uid when it has no grant annotation)
    kube_admin get lease demo-slot-0 -n shimkeeper-system -o json | python3 -S -c 'import json, sys
meta = json.load(sys.stdin)["metadata"]
print(meta.get("annotations", {}).get("shim.containerd.x-k8s.io/grant") or meta["uid"])'
}
grant=$(grant_of)
[[ $(kube_admin get lease demo-slot-0 -n shimkeeper-system -o jsonpath='{.spec.holderIdentity}') == node-1 ]] ||
    fail "demo-slot-0 is not node-1's"
entry="{\"done\":true,\"generation\":$generation,\"grant\":\"$grant\",\"lease\":\"demo-slot-0\",\"renewed\":\"$(now)\",\"shim\":\"demo\",\"uid\":\"$uid\"}"

unchanged() { # WHO: node-1 has not changed, and its entry still says done with the grant
    ! grep -q demo "$T/roots/node-1/etc/containerd/config.toml" ||
        fail "$1 changed node-1's containerd config on a grant node-1 had given back"
    ! rollout_finished node-1 demo || fail "$1 reported demo installed on a grant node-1 had given back"
    [[ $(rollout_annotation node-1 held_demo) == "$entry" ]] ||
        fail "$1 wrote node-1's entry over its give-back: $(rollout_annotation node-1 held_demo)"
}
lock=$T/roots/node-1/var/lib/shimkeeper/state/lock
mkdir -p "${lock%/*}"
flock "$lock" -c "echo held >'$T/locked'; while [ ! -e '$T/unlock' ] && [ ! -e '$T/.ending' ]; do sleep 0.1; done" &
sk_track $!
sk_wait_for_file "$T/locked" 30 || fail "the node lock was not taken"
timeout 120 "$SHIMKEEPER" --root "$T/roots/node-1" apply --no-restart >"$T/apply.out" 2>&1 &
applying=$!
waits_for_lock() { grep -q "waiting for the node lock" "$T/apply.out"; }
kube_wait_for 30 waits_for_lock || fail "apply did not wait for the node lock: $(cat "$T/apply.out")"
kube_admin annotate node node-1 --overwrite "shim.containerd.x-k8s.io/held_demo=$entry" >/dev/null
touch "$T/unlock"
wait "$applying" || true
applied=$(cat "$T/apply.out")
grep -q "not converged: waiting for the coordinator to grant a rollout slot of Shim/demo" <<<"$applied" ||
    fail "apply on node-1 did not ask anew for a slot it had given back: $applied"
unchanged "apply"
pass "apply on node-1 did not take back the grant its Node says done with; it asked anew and waits"

rollout_start_agent node-1
waits() { grep -q "waiting for the coordinator to grant a rollout slot of Shim/demo" "$T/roots/node-1/run/status.json"; }
kube_wait_for 60 waits || fail "node-1's daemon does not say it waits for a grant: $(cat "$T/roots/node-1/run/status.json" 2>&1)"
unchanged "the daemon"
[[ $(kube_admin get lease demo-slot-0 -n shimkeeper-system -o jsonpath='{.spec.holderIdentity}') == node-1 ]] ||
    fail "demo-slot-0 changed while the coordinators were held"
pass "a daemon started on node-1 did not take it back either"

for pid in "${COORDINATOR_PIDS[@]}"; do kill -CONT "$pid"; done
kube_wait_for 90 rollout_finished node-1 demo "$generation" ||
    fail "node-1 did not install demo once the coordinators went on: $(rollout_annotation node-1 demo)"
taken=$(rollout_annotation node-1 held_demo | python3 -S -c 'import json, sys; print(json.load(sys.stdin)["grant"])')
[[ $taken != "$grant" ]] || fail "node-1 installed demo on the grant it had given back ($grant)"
pass "node-1 was granted anew ($taken, not $grant) and installed demo"
