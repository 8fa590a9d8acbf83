#!/usr/bin/env bash
# A pass that holds the coordinator's loop does not cost the term. A pass's writes block the loop
# (kubeapi/request_bound.hpp), and on a saturated API server one create took seconds; renewed on
# that loop, the Lease went unrenewed past the renew deadline and the other candidate waited out the
# lease. The leader renews on a thread of its own (kubeapi/leader_renewal.hpp). Both candidates run
# with SHIMKEEPER_FAULT_SWITCH=pass-stalls (fault-injection builds): the first pass of a process
# holds its loop for 17 s, longer than the renew deadline (10 s) and the lease (15 s), as a write
# waiting on a hung API server would.
#   - While the leader's loop stalls, its Lease is renewed (renewTime moves).
#   - After the stall the same candidate still holds the Lease, in the same term (one "leads"
#     line, no "no longer leads", leaseTransitions unchanged), and its pass goes on: a Shim
#     applied during the stall gets its RuntimeClass. Seen failing with the renewals back on
#     the loop: "coord-1 no longer leads: no renewal within the renew deadline".
# seconds-about: 45
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/coordinator_process.sh"
"$SHIMKEEPER" -o json version | grep -q '"pass-stalls"' ||
    { echo "skip: $SHIMKEEPER is not a -DSHIMKEEPER_FAULT_INJECTION=ON build"; exit 77; }
kube_require_peers
sk_init
kube_up "$T/kube"
export SHIMKEEPER_FAULT_SWITCH=pass-stalls
coordinator_start coord-1
coordinator_start coord-2
unset SHIMKEEPER_FAULT_SWITCH

lease_field() { # JSONPATH: of the coordinator Lease
    kube_admin get lease shimkeeper-coordinator -n shimkeeper-system -o jsonpath="{.spec.$1}"
}
stalling_log() { grep -l "pass-stalls: this pass holds the loop" "$T"/coord-*.log 2>/dev/null; }
kube_wait_for 60 stalling_log || fail "no coordinator began a pass: $(tail -n 5 "$T"/coord-*.log)"
log=$(stalling_log)
leader=$(basename "$log" .log)
[[ $(lease_field holderIdentity) == "$leader" ]] ||
    fail "$leader stalls its pass but the Lease names '$(lease_field holderIdentity)'"
transitions=$(lease_field leaseTransitions)
renewed_at=$(lease_field renewTime)
kube_shim_yaml stalled "http://127.0.0.1:1/none.tar.gz" "$(printf '%064d' 0)" \
    "  nodeSelector: {shimkeeper-test/none: here}" | kube_admin apply -f - >/dev/null

renewed() { [[ $(lease_field renewTime) != "$renewed_at" ]]; }
kube_wait_for 10 renewed || fail "the Lease was not renewed while $leader's pass stalled (renewTime $renewed_at)"
grep -q "the stalled pass goes on" "$log" && fail "the stall ended before the renewal was seen: it proves nothing"
pass_went_on() { grep -q "the stalled pass goes on" "$log"; }
kube_wait_for 30 pass_went_on || fail "$leader's stalled pass never went on: $(tail -n 5 "$log")"
echo "ok: $leader's loop stalled for 17 s; its Lease was renewed meanwhile"

[[ $(lease_field holderIdentity) == "$leader" ]] ||
    fail "the Lease went to '$(lease_field holderIdentity)' while $leader's pass stalled"
[[ $(lease_field leaseTransitions) == "$transitions" ]] ||
    fail "leaseTransitions went from $transitions to $(lease_field leaseTransitions)"
! grep -q "no longer leads" "$log" || fail "$(grep "no longer leads" "$log")"
(($(grep -c " leads (Lease" "$log") == 1)) || fail "$leader began $(grep -c " leads (Lease" "$log") terms"
handled() { [[ -n $(kube_admin get runtimeclass stalled -o name 2>/dev/null) ]]; }
kube_wait_for 30 handled || fail "$leader did not write Shim stalled's RuntimeClass after the stall: $(tail -n 10 "$log")"
echo "ok: $leader kept its term through the stall ($transitions transitions) and handled Shim stalled after it"
