#!/usr/bin/env bash
# shimkeeper's watch (src/shimkeeper/kubeapi/watch.hpp) against the real apiserver, run by
# kube-probe on its own sd-event loop through libcurl's multi interface:
#   - list (paged: kube-probe asks 2 per page) then watch: a SYNCED snapshot, then ADDED,
#     MODIFIED, DELETED as kubectl makes them, filtered by a label selector;
#   - timeoutSeconds rotation: with a 1 s minimum the server ends each watch within 2 s; the
#     watch goes on from its resourceVersion without listing again (lists=1);
#   - 410 Gone: after an etcd compaction (through etcd's JSON gateway; ConfigMaps are served
#     without the watch cache here), resuming from resourceVersion 1 is answered with 410 and the
#     watch lists again (SYNCED);
#   - a field selector as a node identity: only its own Node;
#   - a watch on a connection of its own (the agent's slot watch) leaves no connection behind for
#     the other watches to take: after its list, kube-probe holds none (and one without it);
#   - a watch list (the agent's slot watch: WatchSettings::stream_initial): the collection and
#     then its changes on one request, which the API server counts as a WATCH and no LIST; and
#     with the server's WatchList gate off (as Kubernetes 1.33 ships), refused with 422 and
#     served by list + watch instead.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
probe=${SHIMKEEPER_BUILD_DIR:?}/tests/support/kube-probe
[[ -x $probe ]] || kube_skip "kube-probe is not built"
kube_require_peers
# ConfigMaps straight from etcd (no watch cache): an etcd compaction is then a real 410 for them.
export KUBE_APISERVER_EXTRA_ARGS="--watch-cache-sizes=configmaps#0"
kube_up "$(mktemp -d /tmp/sk-kube.XXXXXX)"

admin=$(kube_kubeconfig admin)
ns=shimkeeper-system
pass() { echo "ok: $*"; }
fail() {
    echo "FAIL: $*" >&2
    [[ -n ${out:-} && -f $out ]] && cat "$out" >&2
    exit 1
}
has_line() { grep -qx -- "$2" "$1"; }
# wait_line FILE LINE: polls until FILE holds exactly LINE (30 s deadline).
wait_line() { kube_wait_for 30 has_line "$1" "$2" || fail "no line \"$2\" in $1"; }

echo "--- list, then watch: ADDED, MODIFIED, DELETED, across rotations"
for i in 1 2 3; do
    kube_admin create cm "w$i" -n $ns >/dev/null
    kube_admin label cm "w$i" -n $ns app=w >/dev/null
done
out=$KUBE_DIR/watch.out
"$probe" "$admin" watch configmaps $ns 4 90 label=app=w timeout=1 >"$out" 2>"$KUBE_DIR/watch.err" &
probe_pid=$!
wait_line "$out" "SYNCED 3 w1 w2 w3"
pass "SYNCED with the 3 labelled ConfigMaps (2 per page)"
kube_admin create cm other -n $ns >/dev/null # no label: never seen
kube_admin create cm w4 -n $ns -o json --dry-run=client |
    python3 -S -c 'import json,sys; d=json.load(sys.stdin); d["metadata"]["labels"]={"app":"w"}; print(json.dumps(d))' |
    kube_admin create -f - >/dev/null
wait_line "$out" "ADDED w4"
pass "ADDED w4"
# Two rotations at least before the next change: the watch must survive them without a list.
wait_line "$out" "WATCHING 3"
kube_admin label cm w4 -n $ns extra=yes >/dev/null
wait_line "$out" "MODIFIED w4"
pass "MODIFIED w4 after the watch rotated twice"
kube_admin delete cm w4 -n $ns >/dev/null
wait_line "$out" "DELETED w4"
pass "DELETED w4"
wait "$probe_pid" || fail "kube-probe watch failed: $(cat "$KUBE_DIR/watch.err")"
summary=$(tail -n 1 "$out")
[[ $summary == lists=1\ * ]] || fail "the watch listed again: $summary"
! grep -q ' other$' "$out" || fail "an unlabelled ConfigMap came through the label selector"
pass "one list only: $summary"

echo "--- a watch on a connection of its own leaves none behind"
# Its list is answered on an HTTP/1.1 connection of its own, which must not stay in the multi
# handle's cache, where the next HTTP/2 watch would take it. The same list on the shared
# connection keeps that one open: the count does see a kept connection.
for own in 0 1; do
    out=$KUBE_DIR/own-$own.out
    err=$KUBE_DIR/own-$own.err
    "$probe" "$admin" watch configmaps $ns 1 30 label=app=w own=$own >"$out" 2>"$err" ||
        fail "own=$own: $(cat "$err")"
    has_line "$out" "SYNCED 3 w1 w2 w3" || fail "own=$own: no SYNCED"
done
grep -q ' connections=1 ' "$KUBE_DIR/own-0.out" ||
    fail "the shared connection was not kept: $(tail -n 1 "$KUBE_DIR/own-0.out")"
grep -q ' connections=0 ' "$KUBE_DIR/own-1.out" ||
    fail "a connection of its own was left open: $(tail -n 1 "$KUBE_DIR/own-1.out")"
pass "its own connection closed with its list; the shared one kept"

echo "--- 410 Gone -> list again"
# Compact etcd's history up to now through its JSON gateway (etcdctl is not built): a watch from
# resourceVersion 1 then needs revisions that are gone.
etcd_url=$(tr '\0' '\n' <"/proc/$KUBE_APISERVER_PID/cmdline" | sed -n 's/^--etcd-servers=//p')
[[ -n $etcd_url ]] || etcd_url=$(tr '\0' '\n' <"/proc/$KUBE_APISERVER_PID/cmdline" |
    grep -A1 -x -- --etcd-servers | tail -n 1)
revision=$(kube_admin create cm compact-mark -n $ns -o jsonpath='{.metadata.resourceVersion}')
curl -sS -X POST "$etcd_url/v3/kv/compaction" -d "{\"revision\": \"$revision\", \"physical\": true}" \
    >"$KUBE_DIR/compaction.out" || fail "compacting etcd at $etcd_url failed"
pass "etcd compacted up to revision $revision: $(cat "$KUBE_DIR/compaction.out")"
out=$KUBE_DIR/resume.out
"$probe" "$admin" watch configmaps $ns 1 60 label=app=w resume=1 >"$out" 2>"$KUBE_DIR/resume.err" ||
    fail "resume from 1: $(cat "$KUBE_DIR/resume.err")"
has_line "$out" "SYNCED 3 w1 w2 w3" || fail "no SYNCED after resuming from resourceVersion 1"
grep -q 'problem=410 Gone' "$out" || fail "no 410 seen"
pass "resourceVersion 1 was answered 410 and the watch listed: $(tail -n 1 "$out")"

echo "--- a field selector as a node identity"
kube_create_node node-a
kube_create_node node-b
out=$KUBE_DIR/node.out
"$probe" "$(kube_kubeconfig node-a)" watch nodes - 2 60 field=metadata.name=node-a >"$out" \
    2>"$KUBE_DIR/node.err" &
probe_pid=$!
wait_line "$out" "SYNCED 1 node-a"
kube_admin label node node-b seen=no >/dev/null
kube_admin label node node-a seen=yes >/dev/null
wait_line "$out" "MODIFIED node-a"
wait "$probe_pid" || fail "node watch: $(cat "$KUBE_DIR/node.err")"
! grep -q 'node-b' "$out" || fail "node-a saw node-b"
pass "node-a watched only its own Node"

echo "--- a watch list: the collection, then its changes, on one request"
# requests VERB: the API server's count of that verb on Leases, every code.
requests() {
    kube_get /metrics | awk -v verb="verb=\"$1\"" '/^apiserver_request_total\{/ &&
        index($0, "resource=\"leases\"") && index($0, verb) { n += $NF } END { print n + 0 }'
}
lease_yaml() {
    printf 'apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata: {name: %s, labels: {app: w}}\nspec: {holderIdentity: x}\n' "$1"
}
for i in 1 2; do lease_yaml "l$i" | kube_admin -n $ns create -f - >/dev/null; done
lists=$(requests LIST) watches=$(requests WATCH)
out=$KUBE_DIR/stream.out
"$probe" "$admin" watch leases $ns 2 60 label=app=w stream=1 own=1 >"$out" \
    2>"$KUBE_DIR/stream.err" &
probe_pid=$!
wait_line "$out" "SYNCED 2 l1 l2"
lease_yaml l3 | kube_admin -n $ns create -f - >/dev/null
wait_line "$out" "ADDED l3"
wait "$probe_pid" || fail "the watch list: $(cat "$KUBE_DIR/stream.err")"
grep -q '^lists=0 watches=1 ' "$out" || fail "not one streamed watch: $(tail -n 1 "$out")"
(($(requests LIST) == lists)) || fail "the API server counted a LIST ($lists, then $(requests LIST))"
(($(requests WATCH) == watches + 1)) ||
    fail "the API server counted $(($(requests WATCH) - watches)) WATCH requests, not 1"
pass "SYNCED l1 l2, then ADDED l3: one WATCH on the API server, no LIST"

echo "--- a server with watch lists off: list + watch"
kube_stop_pid "$KUBE_APISERVER_PID"
KUBE_APISERVER_EXTRA_ARGS="--feature-gates=WatchList=false" \
    kube_start_apiserver "$KUBE_APISERVER_PORT" "$KUBE_ETCD_PORT"
kube_wait_for 120 kube_ready || fail "kube-apiserver did not come back with WatchList=false"
out=$KUBE_DIR/no-stream.out
"$probe" "$admin" watch leases $ns 1 60 label=app=w stream=1 own=1 >"$out" \
    2>"$KUBE_DIR/no-stream.err" || fail "with WatchList off: $(cat "$KUBE_DIR/no-stream.err")"
has_line "$out" "SYNCED 3 l1 l2 l3" || fail "with WatchList off: no SYNCED 3 l1 l2 l3"
summary=$(tail -n 1 "$out")
[[ $summary == "lists=1 watches=1 "*"HTTP 422"*"listing instead)" ]] ||
    fail "with WatchList off, not a refused watch list and then a list: $summary"
pass "refused with 422, then listed: $summary"
echo "PASS"
