#!/usr/bin/env bash
# Coordinator takeover: two coordinators (kube-probe, the coordinator identity) are candidates for
# the coordinator Lease; the follower watches it and runs no election round (no request) while the
# leader renews; the leader is killed (SIGKILL, no release); the other takes over once the lease
# expires by its own clock and carries on: a Shim created after the kill still gets its finalizer,
# RuntimeClass and status. A leader stopped with SIGTERM releases the Lease (holder cleared).
# seconds-about: 20
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_coordinator.sh"
coord_testbed
lease=4
holder() {
    kube_admin get lease shimkeeper-coordinator -n shimkeeper-system -o jsonpath='{.spec.holderIdentity}'
}

kube_create_node node-a
kube_create_node node-b
coord_lead node-a "lease=$lease"
coord_start node-b "lease=$lease"
shim_apply one
wait_eq 30 one kube_admin get runtimeclass one -o jsonpath='{.handler}'
wait_eq 30 2 shim_get one .status.nodes.selected
[[ $(holder) == node-a ]] || fail "the Lease names $(holder)"
! coord__has_line node-b '^LEADER' || fail "node-b led while node-a renewed"
pass "node-a leads and handled Shim one; node-b follows"

# While node-a renews, node-b learns it from its watch: five renewals, not one round of node-b's.
a_rounds=$(coord_rounds node-a) b_rounds=$(coord_rounds node-b)
renewed_five() { (($(coord_rounds node-a) >= a_rounds + 5)); }
kube_wait_for 30 renewed_five || fail "node-a did not renew five times"
[[ $(coord_rounds node-b) == "$b_rounds" ]] ||
    fail "node-b ran $(($(coord_rounds node-b) - b_rounds)) election rounds while node-a renewed"
pass "node-b ran no election round during five renewals of node-a"

kill -KILL "${COORD_PIDS[node-a]}"
killed_at=$SECONDS
shim_apply two
coord_wait_line node-b '^LEADER 1$' 30
took=$((SECONDS - killed_at))
wait_eq 30 two kube_admin get runtimeclass two -o jsonpath='{.handler}'
wait_eq 30 '["shim.containerd.x-k8s.io/uninstall"]' shim_get two .metadata.finalizers
wait_eq 30 "2" shim_get two .status.nodes.selected
[[ $(holder) == node-b ]] || fail "the Lease names $(holder) after the takeover"
# The lease runs from node-b's own observation of node-a's last renewal, checked every second.
((took <= 2 * lease + 2)) || fail "node-b took over ${took}s after the kill (lease ${lease}s)"
pass "node-b took over ${took}s after node-a was killed (lease ${lease}s) and handled Shim two"

kill -TERM "${COORD_PIDS[node-b]}"
wait "${COORD_PIDS[node-b]}" || fail "node-b did not exit cleanly on SIGTERM"
coord__has_line node-b '^RELEASED$' || fail "node-b did not release"
[[ $(holder) == "" ]] || fail "the Lease still names $(holder) after the release"
pass "SIGTERM: node-b released the Lease"
echo "PASS"
