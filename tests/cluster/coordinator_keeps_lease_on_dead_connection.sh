#!/usr/bin/env bash
# A renewal stuck on a dead connection does not cost the term. One coordinator talks to the API
# server through a TCP proxy (tests/support/pausable_proxy.py). Once it leads, the proxy severs
# every connection open then, as a peer gone without a reset does: the renewal in flight, and any
# other request on those connections, gets no answer and no error. New connections go through.
#   - The leader's Lease goes on being renewed across the renew deadline (10 s) and past a whole
#     lease (15 s) after the cut: each renewal request is bounded by half the deadline
#     (kubeapi/leader_renewal.hpp), and the round after a timed-out one opens a fresh connection.
#   - The same candidate holds the Lease in the same term: one "leads" line, no "no longer
#     leads", leaseTransitions unchanged.
# Seen failing with the renewal's requests under the general 15-s bound: "coord-1 no longer
# leads: no renewal within the renew deadline".
# seconds-about: 40
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/coordinator_process.sh"
kube_require_peers
sk_init
kube_up "$T/kube"

kube_proxy_start || fail "no proxy in front of the API server"
proxied=$T/coordinator-proxied.kubeconfig
kube_proxied_kubeconfig "$(kube_kubeconfig coordinator)" "$proxied" || fail "no kubeconfig through the proxy"
printf '[kube]\nkubeconfig = "%s"\n' "$proxied" >"$T/coordinator.toml"
coordinator_start coord-1

lease_field() { # JSONPATH: of the coordinator Lease
    kube_admin get lease shimkeeper-coordinator -n shimkeeper-system -o jsonpath="{.spec.$1}"
}
leads() { [[ $(lease_field holderIdentity) == coord-1 ]]; }
kube_wait_for 60 leads || fail "coord-1 did not lead: $(tail -n 5 "$T/coord-1.log")"
transitions=$(lease_field leaseTransitions)
# A renewal or two on the connection the cut will sever.
renewed_since() { # EPOCH: the Lease's renewTime is later
    python3 -S -c 'import datetime, sys
t = datetime.datetime.strptime(sys.argv[1], "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
sys.exit(t.timestamp() <= float(sys.argv[2]))' "$(lease_field renewTime)" "$1"
}
kube_wait_for 10 renewed_since "$(date +%s.%N)" || fail "coord-1 does not renew its Lease"

echo "--- every connection open now is severed"
kill -HUP "$KUBE_PROXY"
kube_wait_for 5 kube_proxy_is severed || fail "the proxy did not sever"
cut_at=$(date +%s.%N)
# Renewed after the renew deadline and after a whole lease, both counted from the cut.
deadline_passed() { renewed_since "$(python3 -S -c "print($cut_at + 11)")"; }
kube_wait_for 30 deadline_passed ||
    fail "the Lease was not renewed more than 11 s after the cut: renewTime $(lease_field renewTime); $(tail -n 5 "$T/coord-1.log")"
lease_passed() { renewed_since "$(python3 -S -c "print($cut_at + 16)")"; }
kube_wait_for 30 lease_passed ||
    fail "the Lease was not renewed more than a lease after the cut: renewTime $(lease_field renewTime); $(tail -n 5 "$T/coord-1.log")"
echo "ok: the Lease renewed past the renew deadline and a whole lease after the cut"

! grep -q "no longer leads" "$T/coord-1.log" || fail "$(grep "no longer leads" "$T/coord-1.log")"
[[ $(grep -c "coord-1 leads" "$T/coord-1.log") == 1 ]] ||
    fail "coord-1 began more than one term: $(grep "leads" "$T/coord-1.log")"
[[ $(lease_field holderIdentity) == coord-1 && $(lease_field leaseTransitions) == "$transitions" ]] ||
    fail "the Lease changed hands: holder $(lease_field holderIdentity), transitions $(lease_field leaseTransitions) (was $transitions)"
grep -m1 "renewing Lease" "$T/coord-1.log" || true
echo "ok: coord-1 kept its term across the dead connection"
echo "PASS"
