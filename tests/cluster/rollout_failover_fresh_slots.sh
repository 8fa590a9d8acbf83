#!/usr/bin/env bash
# A coordinator failover does not lose a halt. A standby candidate's Lease watch can run seconds
# behind a loaded API server (a new leader granting from it could grant slots of a halted
# generation), so a new term lists the slots anew before it grants. Both candidates run with
# SHIMKEEPER_FAULT_SWITCH=standby-lease-watch-behind (fault-injection builds): while standing by, a
# candidate's Lease watch delivers no slot change at all, the lag made certain.
#   - Shim demo, maxUpdate 2: node-1 alone asks first and fails (it refuses downloads over 1000
#     bytes); its slot is marked failed and the rollout halts; node-2 and node-3 ask after it.
#   - The leader stops (SIGTERM: it releases the Lease) and the standby, whose watch never
#     delivered node-1's slot, takes over. Its grant step runs with node-2's and node-3's requests
#     in (proven by its grant of Shim other's slot, asked for after the takeover).
#   - No slot of demo is taken after the failure (slots_after.py). A term that granted from its
#     standby view (ROLLOUT_EXTRA_SWITCH=term-keeps-slots) hands demo-slot-1 to node-3 (node-2
#     is refused slot-0, which exists): cluster.rollout_failover_checks_fail (tests/CMakeLists.txt)
#     passes only when this scenario fails so.
# seconds-about: 40
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
"$SHIMKEEPER" -o json version | grep -q '"standby-lease-watch-behind"' ||
    { echo "skip: $SHIMKEEPER is not a -DSHIMKEEPER_FAULT_INJECTION=ON build"; exit 77; }
export SHIMKEEPER_FAULT_SWITCH=standby-lease-watch-behind${ROLLOUT_EXTRA_SWITCH:+,$ROLLOUT_EXTRA_SWITCH}
rollout_testbed # both candidates
unset SHIMKEEPER_FAULT_SWITCH
nodes=(node-1 node-2 node-3)
rollout_agents 1 3 rollout=yes
printf '\n[fetch]\nmax_size = 1000\n' >>"$T/roots/node-1/etc/shimkeeper/shimkeeper.toml"
make_shim_archive "$(shim_binary_for other)" "$T/www/other.tar.gz"
kube_wait_for 60 coordinator_elected || fail "no coordinator was elected"
leader=$(coordinator_leader)
case $leader in
coord-1) standby=coord-2 ;;
coord-2) standby=coord-1 ;;
*) fail "the coordinator Lease names '$leader'" ;;
esac
rollout_record

asked() { # NODE SHIM: its Node asks for a slot of SHIM
    kube_admin get node "$1" -o jsonpath='{.metadata.annotations.shim\.containerd\.x-k8s\.io/slot_requests}' |
        grep -q "\"$2\""
}
halted() { [[ "$(kube_admin get shim demo -o jsonpath='{.status.conditions[?(@.type=="RolloutHalted")].status}')" == True ]]; }
strategy() { # MAXUPDATE
    echo "  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: $1}}"
}

echo "--- node-1 fails under $leader; node-2 and node-3 ask after it"
for node in node-2 node-3; do kill -STOP "${ROLLOUT_PIDS[$node]}"; done
kube_shim_yaml demo "$SERVER_URL/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")" "$(strategy 2)" |
    kube_admin apply -f - >/dev/null
kube_wait_for 60 halted || fail "node-1's failure did not halt the rollout: $(rollout_slot_holders)"
read -r slot holder failed_rv <<<"$(rollout_failed_slot)"
[[ $holder == node-1 ]] || fail "the failed slot ($slot) is held by '$holder', not node-1"
for node in node-2 node-3; do kill -CONT "${ROLLOUT_PIDS[$node]}"; done
for node in node-2 node-3; do
    kube_wait_for 30 asked "$node" demo || fail "$node did not ask for a slot of demo"
done
pass "demo halted on node-1 ($slot); node-2 and node-3 ask"

echo "--- $leader stops; $standby, its watch behind, takes over"
kill -TERM "${COORDINATOR_PIDS[$leader]}"
leads() { [[ $(coordinator_leader) == "$standby" ]]; }
kube_wait_for 30 leads || fail "$standby did not take over: $(tail -n 20 "$T/$standby.log")"
kube_shim_yaml other "$SERVER_URL/other.tar.gz" "$(sha256_of "$T/www/other.tar.gz")" "$(strategy 1)" |
    kube_admin apply -f - >/dev/null
granted_other() { grep -q "granted rollout slot other-slot-0 " "$T/$standby.log"; }
kube_wait_for 60 granted_other ||
    fail "$standby granted no slot of Shim other: its grant step never ran ($(tail -n 20 "$T/$standby.log"))"
# demo's requests came before the takeover; the grant of other came after, in a step that saw them.
report=$(rollout_no_slot_after "$failed_rv" demo) ||
    fail "the new leader granted demo after node-1's failure: $report ($(grep 'granted rollout slot' "$T/$standby.log"))"
halted || fail "demo's rollout is no longer halted: $(kube_admin get shim demo -o jsonpath='{.status.conditions}')"
pass "$standby granted other's slot and none of demo's: $report"
