#!/usr/bin/env bash
# A slot is a real bound even for a node cut off from the API server while it works. 4 agents on
# sandbox roots, maxUpdate 1; node-1 talks to the API server through a TCP proxy
# (tests/support/pausable_proxy.py) and is the first to take the slot. Its download (and the next
# one) is held by the artifact server (/hold/2/...) while the proxy is paused for longer than the
# lease: the coordinator frees node-1's slot and node-2..4 take it. Then the proxy goes on and both
# held downloads finish at once.
#   - node-1 never passes its point of no return on the slot it lost: it says so, stays as it
#     was, halts nothing, and later takes a slot again and finishes;
#   - counted from the transactions themselves (each agent records its steps: ROLLOUT_STEPS), never
#     more than 1 node is between its first change and its commit; every node's transaction is in
#     that record, and the API server's record (rollout_check) covers every node too.
# The check fails on a build without the rule (seen by taking it out: README, Tests).
# seconds-about: 55
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
rollout_require_fault_build
rollout_testbed
nodes=(node-1 node-2 node-3 node-4)
export ROLLOUT_STEPS=$T/steps ROLLOUT_LINGER=2
: >"$ROLLOUT_STEPS"

rollout_proxied_agent node-1 rollout=yes
rollout_agents 2 4 rollout=yes
proxy=$KUBE_PROXY
proxy_is() { kube_proxy_is "$1"; }

kube_wait_for 60 coordinator_elected || fail "no coordinator was elected"
rollout_record
url_path=/hold/2/demo.tar.gz
held() { # the artifact server has seen at least $1 requests for the held download
    curl -fsS "$SERVER_URL/_requests" | python3 -S -c 'import json, sys
sys.exit(json.load(sys.stdin)["paths"].get(sys.argv[1], 0) < int(sys.argv[2]))' "$url_path" "$1"
}
holder() { kube_admin get lease demo-slot-0 -n shimkeeper-system -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }

echo "--- node-1 takes the slot first; its download is held"
for node in "${nodes[@]:1}"; do kill -STOP "${ROLLOUT_PIDS[$node]}"; done
kube_shim_yaml demo "$SERVER_URL$url_path" "$(sha256_of "$T/www/demo.tar.gz")" \
    "  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: 1}}" | kube_admin apply -f - >/dev/null
kube_wait_for 60 held 1 || fail "node-1 never started its download: $(tail -n 20 "$T/roots/node-1.log")"
[[ "$(holder)" == node-1 ]] || fail "the slot is held by '$(holder)', not node-1"

echo "--- node-1 cut off for longer than the lease; another node takes the slot"
kill -USR1 $proxy
kube_wait_for 5 proxy_is paused || fail "the proxy did not pause"
for node in "${nodes[@]:1}"; do kill -CONT "${ROLLOUT_PIDS[$node]}"; done
other_holds() { local h; h=$(holder); [[ -n $h && $h != node-1 ]]; }
kube_wait_for 60 other_holds || fail "nobody took node-1's slot: $(holder)"
kube_wait_for 30 held 2 || fail "the new holder $(holder) never started its download"
pass "node-1's slot expired while it was cut off; $(holder) holds it and downloads"

echo "--- node-1 back; both downloads finish at once"
kill -USR2 $proxy
kube_wait_for 5 proxy_is running || fail "the proxy did not resume"
curl -fsS "$SERVER_URL/_release" >/dev/null
refused() { grep -q "not changing Shim/demo generation 1: rollout slot demo-slot-0" "$T/roots/node-1.log"; }
kube_wait_for 60 refused || fail "node-1 did not stop before its point of no return: $(tail -n 30 "$T/roots/node-1.log")"
grep "not changing Shim/demo" "$T/roots/node-1.log" | head -n 1
all_finished() {
    rollout_finished_on demo 1 "${nodes[@]}"
}
kube_wait_for 180 all_finished ||
    fail "not every node finished: $(for n in "${nodes[@]}"; do echo "$n $(rollout_annotation "$n" demo)"; done)"
! grep -q "marked failed" "$T"/roots/node-*.log || fail "a lost slot halted the rollout: $(grep "marked failed" "$T"/roots/node-*.log)"
[[ "$(kube_admin get shim demo -o jsonpath='{.status.conditions[?(@.type=="RolloutHalted")].status}')" != True ]] ||
    fail "the rollout is halted"
pass "node-1 stopped before its point of no return, halted nothing, and finished later with a slot"

overlap=$(rollout_overlap 1 "${nodes[@]}") || fail "the transactions broke the bound: $overlap"
echo "$overlap"
report=$(rollout_check demo 1 "" --nodes "${nodes[*]}") || fail "the API server's record: $report"
echo "$report"
pass "never more than 1 node past its point of no return, counted from the transactions"
