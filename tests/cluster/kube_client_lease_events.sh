#!/usr/bin/env bash
# Leader election on a Lease and Events, by shimkeeper's client (kube-probe) as the agent identity
# (deploy/'s RBAC), checked with the real kubectl:
#   - two candidates: exactly one leads; the other follows and never leads while the leader
#     renews; a crashed leader (SIGKILL, no release) is replaced after its lease expires, as
#     observed by the follower's own clock; the Lease shows the new holder and one more transition;
#   - release: a leader stopped with SIGTERM clears the holder, and a follower takes over well
#     before the (long) lease would have expired;
#   - Events (events.k8s.io/v1): about a namespaced object in its namespace, about a
#     cluster-scoped Node in "default", with reportingController/reportingInstance.
# seconds-about: 30
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
probe=${SHIMKEEPER_BUILD_DIR:?}/tests/support/kube-probe
[[ -x $probe ]] || kube_skip "kube-probe is not built"
kube_require_peers
kube_up "$(mktemp -d /tmp/sk-kube.XXXXXX)"

# The client's election and Events, not deploy/'s policies (identities_and_policy.sh has those):
# as the admin, so that any Lease name and an Event in any namespace may be written.
agent=$KUBECONFIG_ADMIN
ns=shimkeeper-system
pass() { echo "ok: $*"; }
fail() {
    echo "FAIL: $*" >&2
    for f in "$KUBE_DIR"/cand-*.out; do
        echo "== $f" >&2
        cat "$f" >&2
    done
    exit 1
}
has_match() { grep -qE -- "$2" "$1"; }
wait_match() { kube_wait_for "${3:-30}" has_match "$1" "$2" || fail "no \"$2\" in $1"; }
holder() { kube_admin get lease "$1" -n $ns -o jsonpath='{.spec.holderIdentity}'; }
# candidate LEASE IDENTITY DURATION: starts a candidate in the background, output in
# cand-<lease>-<identity>.out
candidate() {
    "$probe" "$agent" lease $ns "$1" "$2" "$3" 120 >"$KUBE_DIR/cand-$1-$2.out" 2>"$KUBE_DIR/cand-$1-$2.err" &
}

echo "--- two candidates, one leader; takeover after the leader crashes"
candidate coordinator node-a 3
pid_a=$!
wait_match "$KUBE_DIR/cand-coordinator-node-a.out" '^ROUND [0-9]+ LEADER node-a$'
candidate coordinator node-b 3
pid_b=$!
wait_match "$KUBE_DIR/cand-coordinator-node-b.out" '^ROUND 4 FOLLOWER node-a$'
! has_match "$KUBE_DIR/cand-coordinator-node-b.out" 'LEADER node-b' || fail "node-b led while node-a renewed"
[[ $(holder coordinator) == node-a ]] || fail "the Lease names $(holder coordinator)"
pass "node-a leads, node-b follows through 4 rounds"
transitions_before=$(kube_admin get lease coordinator -n $ns -o jsonpath='{.spec.leaseTransitions}')
kill -KILL "$pid_a"
wait "$pid_a" 2>/dev/null || true
killed_at=$SECONDS
wait_match "$KUBE_DIR/cand-coordinator-node-b.out" 'LEADER node-b$' 30
took=$((SECONDS - killed_at))
[[ $(holder coordinator) == node-b ]] || fail "the Lease names $(holder coordinator) after takeover"
transitions=$(kube_admin get lease coordinator -n $ns -o jsonpath='{.spec.leaseTransitions}')
((transitions == transitions_before + 1)) || fail "leaseTransitions $transitions_before -> $transitions"
((took >= 2)) || fail "node-b took over ${took}s after the crash, before the 3 s lease could expire"
pass "node-b took over ${took}s after node-a crashed; leaseTransitions $transitions"
kill -TERM "$pid_b"
wait "$pid_b" || fail "node-b did not exit cleanly"

echo "--- release hands over at once"
candidate handover node-a 30
pid_a=$!
wait_match "$KUBE_DIR/cand-handover-node-a.out" 'LEADER node-a$'
candidate handover node-c 30
pid_c=$!
wait_match "$KUBE_DIR/cand-handover-node-c.out" 'FOLLOWER node-a$'
kill -TERM "$pid_a"
wait "$pid_a" || fail "node-a did not release cleanly"
released_at=$SECONDS
has_match "$KUBE_DIR/cand-handover-node-a.out" '^RELEASED$' || fail "node-a did not say RELEASED"
wait_match "$KUBE_DIR/cand-handover-node-c.out" 'LEADER node-c$' 25
took=$((SECONDS - released_at))
((took < 25)) || fail "node-c waited ${took}s: the release did not shorten the lease"
[[ $(holder handover) == node-c ]] || fail "handover names $(holder handover)"
pass "node-c led ${took}s after node-a released a 30 s lease"
kill -TERM "$pid_c"
wait "$pid_c" || true

echo "--- events"
kube_create_node node-a
out=$("$probe" "$agent" event nodes - node-a Warning InstallFailed "spin-v2: sha256 mismatch") ||
    fail "event about node-a: $out"
names=$(kube_admin get events.events.k8s.io -n default \
    -o jsonpath='{range .items[*]}{.reason}/{.regarding.kind}/{.regarding.name}/{.reportingController}/{.reportingInstance}/{.type}{"\n"}{end}')
grep -qx 'InstallFailed/Node/node-a/shimkeeper.containerd.x-k8s.io/agent/shimkeeper-probe/Warning' <<<"$names" ||
    fail "no such Event in default: $names"
pass "a Warning Event about Node node-a in default"
out=$("$probe" "$agent" event leases $ns handover Normal Elected "node-c leads") ||
    fail "event about the lease: $out"
kube_admin get events.events.k8s.io -n $ns -o jsonpath='{.items[*].reason}' | grep -qw Elected ||
    fail "no Elected Event in $ns"
note=$(kube_admin get events -n $ns -o jsonpath='{.items[?(@.reason=="Elected")].message}')
[[ $note == "node-c leads" ]] || fail "core/v1 view of the Event: \"$note\""
pass "a Normal Event about Lease handover in $ns, seen through core/v1 too"
echo "PASS"
