#!/usr/bin/env bash
# shimkeeper's own Kubernetes client (src/shimkeeper/kubeapi) against the real apiserver, driven by
# tests/support/kube-probe and checked with the real kubectl as the admin:
#   - create, get, paged list (limit/continue), update with a resourceVersion (409 when stale),
#     delete (with and without a resourceVersion precondition);
#   - merge patch (with a resourceVersion: refused when stale), JSON patch with a `test` on
#     resourceVersion (refused when stale), server-side
#     apply (a second manager conflicts, force takes over);
#   - update_with_retry re-reads on 409;
#   - writes (creates, and replaces of a version) and deletes sent together: each result in its
#     place (a conflict, a stale version, a missing object among successes), over one connection;
#   - the API's Status message shown for a forbidden request (NodeRestriction: node-a patching
#     node-b -> 403), for a missing object (404);
#   - credentials: a tokenFile, a client certificate given inline (-data), and a server whose
#     certificate the configured CA did not sign (refused: TLS is always verified).
# seconds-about: 20
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
probe=${SHIMKEEPER_BUILD_DIR:?}/tests/support/kube-probe
[[ -x $probe ]] || kube_skip "kube-probe is not built"
kube_require_peers
kube_up "$(mktemp -d /tmp/sk-kube.XXXXXX)"

admin=$(kube_kubeconfig admin)
ns=shimkeeper-system
pass() { echo "ok: $*"; }
fail() {
    echo "FAIL: $*" >&2
    exit 1
}
field() { python3 -S -c 'import json,sys; d=json.load(sys.stdin)
for k in sys.argv[1].split("."): d=d[k]
print(d)' "$1"; }
# expect_error WHAT CODE TEXT CMD...: CMD fails with "error (CODE): ...TEXT..."
expect_error() {
    local what=$1 code=$2 text=$3 out
    shift 3
    if out=$("$@" 2>&1); then
        fail "$what succeeded: $out"
    fi
    grep -qF "error ($code)" <<<"$out" || fail "$what: not a $code error: $out"
    grep -qF -- "$text" <<<"$out" || fail "$what: no \"$text\" in: $out"
    pass "$what: $out"
}

echo "--- create, get, update, stale update"
created=$("$probe" "$admin" create configmaps $ns <<<'{"apiVersion":"v1","kind":"ConfigMap",
  "metadata":{"name":"cm1"},"data":{"a":"1"}}')
rv1=$(field metadata.resourceVersion <<<"$created")
[[ $(kube_admin get cm cm1 -n $ns -o jsonpath='{.data.a}') == 1 ]] || fail "cm1 not created"
pass "created cm1 at resourceVersion $rv1"
expect_error "creating cm1 again" conflict 'already exists' \
    "$probe" "$admin" create configmaps $ns <<<'{"metadata":{"name":"cm1"}}'
got=$("$probe" "$admin" get configmaps $ns cm1)
[[ $(field data.a <<<"$got") == 1 ]] || fail "get cm1: $got"
updated=$("$probe" "$admin" update configmaps $ns <<<"{\"apiVersion\":\"v1\",\"kind\":\"ConfigMap\",
  \"metadata\":{\"name\":\"cm1\",\"resourceVersion\":\"$rv1\"},\"data\":{\"a\":\"2\"}}")
rv2=$(field metadata.resourceVersion <<<"$updated")
[[ $(kube_admin get cm cm1 -n $ns -o jsonpath='{.data.a}') == 2 ]] || fail "cm1 not updated"
pass "updated cm1 to resourceVersion $rv2"
expect_error "update with the stale resourceVersion $rv1" conflict 'HTTP 409 Conflict' \
    "$probe" "$admin" update configmaps $ns <<<"{\"metadata\":{\"name\":\"cm1\",
  \"resourceVersion\":\"$rv1\"},\"data\":{\"a\":\"3\"}}"
[[ $(kube_admin get cm cm1 -n $ns -o jsonpath='{.data.a}') == 2 ]] || fail "stale update wrote"

echo "--- merge patch, JSON patch with a test on resourceVersion"
"$probe" "$admin" merge-patch configmaps $ns cm1 '{"data":{"b":"merged"}}' >/dev/null
[[ $(kube_admin get cm cm1 -n $ns -o jsonpath='{.data.b}') == merged ]] || fail "merge patch"
pass "merge patch"
rv3=$(kube_admin get cm cm1 -n $ns -o jsonpath='{.metadata.resourceVersion}')
"$probe" "$admin" json-patch configmaps $ns cm1 "$rv3" \
    '[{"op":"replace","path":"/data/a","value":"jp"}]' >/dev/null
[[ $(kube_admin get cm cm1 -n $ns -o jsonpath='{.data.a}') == jp ]] || fail "JSON patch"
pass "JSON patch at resourceVersion $rv3"
expect_error "JSON patch at the stale resourceVersion $rv3" conflict "changed since version $rv3" \
    "$probe" "$admin" json-patch configmaps $ns cm1 "$rv3" \
    '[{"op":"replace","path":"/data/a","value":"stale"}]'
[[ $(kube_admin get cm cm1 -n $ns -o jsonpath='{.data.a}') == jp ]] || fail "stale JSON patch wrote"
# A merge patch that names a resourceVersion applies only to that version (the coordinator's
# status writes): a stale one is a 409, and nothing is written.
expect_error "merge patch at the stale resourceVersion $rv3" conflict 'HTTP 409 Conflict' \
    "$probe" "$admin" merge-patch configmaps $ns cm1 "{\"metadata\":{\"resourceVersion\":\"$rv3\"},\"data\":{\"a\":\"stale\"}}"
[[ $(kube_admin get cm cm1 -n $ns -o jsonpath='{.data.a}') == jp ]] || fail "stale merge patch wrote"

echo "--- server-side apply"
apply_doc='{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"cm2"},"data":{"k":"one"}}'
"$probe" "$admin" apply configmaps $ns manager-one no-force <<<"$apply_doc" >/dev/null
[[ $(kube_admin get cm cm2 -n $ns -o jsonpath='{.data.k}') == one ]] || fail "apply created"
managers=$(kube_admin get cm cm2 -n $ns --show-managed-fields \
    -o jsonpath='{.metadata.managedFields[*].manager}')
[[ $managers == *manager-one* ]] || fail "manager-one does not own fields: $managers"
pass "apply created cm2, owned by manager-one"
expect_error "apply by manager-two over manager-one's field" conflict 'conflict' \
    "$probe" "$admin" apply configmaps $ns manager-two no-force <<<"${apply_doc/one/two}"
"$probe" "$admin" apply configmaps $ns manager-two force <<<"${apply_doc/one/two}" >/dev/null
[[ $(kube_admin get cm cm2 -n $ns -o jsonpath='{.data.k}') == two ]] || fail "forced apply"
pass "forced apply by manager-two"

echo "--- paged list"
for i in 1 2 3 4 5; do
    kube_admin create cm "page-$i" -n $ns --from-literal=i=$i >/dev/null
done
kube_admin label cm -n $ns page-1 page-2 page-3 page-4 page-5 paged=yes >/dev/null
listed=$("$probe" "$admin" list configmaps $ns 2 paged=yes)
[[ $(field count <<<"$listed") == 5 ]] || fail "paged list (limit 2) of 5: $listed"
pass "paged list with limit 2: $listed"
# One process's requests, one after another, go over one kept-alive connection: a new TCP and
# TLS connection per request costs the API server a certificate signature each.
strace -f -qq -e trace=connect -o "$KUBE_DIR/connects" "$probe" "$admin" list configmaps $ns 1 paged=yes >/dev/null
connects=$(grep -c "sin_port=htons($KUBE_APISERVER_PORT)" "$KUBE_DIR/connects" || true)
((connects == 1)) || fail "a paged list of 5 pages opened $connects connections to the API server, not 1"
pass "a paged list of 5 pages over 1 connection"

echo "--- update_with_retry re-reads after a conflict"
out=$("$probe" "$admin" retry-annotate configmaps $ns cm1 probe/note hello)
# kube-probe's change function writes the object behind its own back on the first attempt (another
# writer), so the first update is stale: the second attempt, on a fresh read, must win.
[[ $(kube_admin get cm cm1 -n $ns -o jsonpath='{.metadata.annotations.probe/note}') == hello-attempt-2 ]] ||
    fail "retry-annotate: $out"
[[ $(kube_admin get cm cm1 -n $ns -o jsonpath='{.metadata.annotations.probe/other}') == writer ]] ||
    fail "the other writer's change was lost: $out"
pass "update_with_retry re-read after a 409 and kept the other writer's change"

echo "--- delete with a precondition"
rv_now=$(kube_admin get cm cm2 -n $ns -o jsonpath='{.metadata.resourceVersion}')
expect_error "delete cm2 at resourceVersion 1" conflict 'does not match the ResourceVersion' \
    "$probe" "$admin" delete configmaps $ns cm2 1
"$probe" "$admin" delete configmaps $ns cm2 "$rv_now" >/dev/null
! kube_admin get cm cm2 -n $ns >/dev/null 2>&1 || fail "cm2 still exists"
pass "deleted cm2 at resourceVersion $rv_now"
expect_error "get the deleted cm2" "not found" 'configmaps "cm2" not found' \
    "$probe" "$admin" get configmaps $ns cm2

echo "--- requests sent together (write_together, remove_together: the coordinator's slot writes)"
kube_admin create cm together-1 -n $ns --from-literal=i=first >/dev/null # its create conflicts
kube_admin create cm together-8 -n $ns --from-literal=i=first >/dev/null # replaced at its version
kube_admin create cm together-9 -n $ns --from-literal=i=first >/dev/null # a stale version: 409
rv8=$(kube_admin get cm together-8 -n $ns -o jsonpath='{.metadata.resourceVersion}')
rv9_old=$(kube_admin get cm together-9 -n $ns -o jsonpath='{.metadata.resourceVersion}')
kube_admin label cm together-9 -n $ns moved=yes >/dev/null
objects=$(python3 -S - "$rv8" "$rv9_old" <<'PY'
import json, sys
objects = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "together-%d" % i},
            "data": {"i": str(i)}} for i in range(10)]
objects[8]["metadata"]["resourceVersion"] = sys.argv[1]
objects[9]["metadata"]["resourceVersion"] = sys.argv[2]
print(json.dumps(objects))
PY
)
written=$("$probe" "$admin" write-together configmaps $ns <<<"$objects")
python3 -S - "$written" <<'PY' || fail "write_together's results: $written"
import json, sys
results = json.loads(sys.argv[1])["results"]
assert len(results) == 10, results
for i, result in enumerate(results):
    if i == 1:
        assert "already exists" in result["error"], result
    elif i == 9:
        assert "the object has been modified" in result["error"], result
    else:
        assert result == {"name": "together-%d" % i}, result
PY
[[ $(kube_admin get cm together-5 -n $ns -o jsonpath='{.data.i}') == 5 &&
    $(kube_admin get cm together-8 -n $ns -o jsonpath='{.data.i}') == 8 &&
    $(kube_admin get cm together-9 -n $ns -o jsonpath='{.data.i}') == first &&
    $(kube_admin get cm together-1 -n $ns -o jsonpath='{.data.i}') == first ]] ||
    fail "write_together did not write what it said: $(kube_admin get cm -n $ns -o yaml | grep -E 'name: together|  i: ')"
pass "write_together of 10: 7 created, 1 replaced at its version, the existing one's create and the stale replace each a conflict in its place"
removed=$("$probe" "$admin" delete-together configmaps $ns together-{0..9} together-none)
python3 -S - "$removed" <<'PY' || fail "remove_together's results: $removed"
import json, sys
results = json.loads(sys.argv[1])["results"]
assert results[:10] == [{"deleted": True}] * 10 and "not found" in results[10]["error"], results
PY
left=$(kube_admin get cm -n $ns -o name | grep -c together || true)
((left == 0)) || fail "remove_together left $left of the ConfigMaps"
pass "remove_together of 11: 10 deleted, the missing one not found"
# Sent together, they share one connection as HTTP/2 streams: one TCP and TLS handshake, not 20.
strace -f -qq -e trace=connect -o "$KUBE_DIR/connects-together" \
    "$probe" "$admin" list-together configmaps $ns 20 >"$KUBE_DIR/together.json"
connects=$(grep -c "sin_port=htons($KUBE_APISERVER_PORT)" "$KUBE_DIR/connects-together" || true)
if [[ $(field new_connections <"$KUBE_DIR/together.json") != 1 ]] || ((connects != 1)) ||
    ! grep -q '"codes":\[200\(,200\)\{19\}\]' "$KUBE_DIR/together.json"; then
    fail "20 lists sent together: $connects connect() calls, $(cat "$KUBE_DIR/together.json")"
fi
pass "20 lists sent together over 1 connection, each answered 200"

echo "--- Status messages for refused requests"
kube_create_node node-a
kube_create_node node-b
"$probe" "$(kube_kubeconfig node-a)" merge-patch nodes - node-a \
    '{"metadata":{"labels":{"shim.containerd.x-k8s.io/demo":"true"}}}' >/dev/null
[[ $(kube_admin get node node-a -o jsonpath='{.metadata.labels.shim\.containerd\.x-k8s\.io/demo}') == true ]] ||
    fail "node-a could not label itself"
pass "node-a labelled its own Node"
expect_error "node-a patching node-b" "refused by the API server" 'is not allowed to modify node "node-b" (HTTP 403 Forbidden)' \
    "$probe" "$(kube_kubeconfig node-a)" merge-patch nodes - node-b \
    '{"metadata":{"labels":{"shim.containerd.x-k8s.io/demo":"true"}}}'
expect_error "a namespace for a cluster-scoped resource" "invalid input" 'cluster-scoped' \
    "$probe" "$admin" get nodes default node-a

echo "--- a tokenFile credential (its re-reading is unit-tested)"
token=$(kube_as coordinator config view --raw -o jsonpath='{.users[0].user.token}')
printf '%s\n' "wrong-token" >"$KUBE_DIR/agent.token"
sed -e "s|token: .*|tokenFile: $KUBE_DIR/agent.token|" "$(kube_kubeconfig coordinator)" >"$KUBE_DIR/agent-file.kubeconfig"
expect_error "a wrong token from tokenFile" "refused by the API server" \
    'HTTP 401 Unauthorized): the credential is expired, revoked' \
    "$probe" "$KUBE_DIR/agent-file.kubeconfig" list shims - 10
printf '%s\n' "$token" >"$KUBE_DIR/agent.token"
"$probe" "$KUBE_DIR/agent-file.kubeconfig" list shims - 10 >/dev/null || fail "tokenFile token"
pass "tokenFile credential works"
echo "--- a client certificate (inline -data) as node-a, signed by the test CA"
(
    cd "$KUBE_DIR/pki"
    openssl req -newkey rsa:2048 -nodes -subj "/O=system:nodes/CN=system:node:node-a" \
        -keyout node-a.key -out node-a.csr 2>/dev/null
    openssl x509 -req -in node-a.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 1 \
        -out node-a.crt 2>/dev/null
)
cat >"$KUBE_DIR/node-a-cert.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters:
  - name: test
    cluster:
      server: $KUBE_SERVER
      certificate-authority-data: $(base64 -w0 "$KUBE_CA")
users:
  - name: node-a
    user:
      client-certificate-data: $(base64 -w0 "$KUBE_DIR/pki/node-a.crt")
      client-key-data: $(base64 -w0 "$KUBE_DIR/pki/node-a.key")
contexts:
  - name: node-a
    context: {cluster: test, user: node-a}
current-context: node-a
YAML
"$probe" "$KUBE_DIR/node-a-cert.kubeconfig" merge-patch nodes - node-a \
    '{"metadata":{"labels":{"shim.containerd.x-k8s.io/cert":"true"}}}' >/dev/null ||
    fail "node-a with a client certificate could not label itself"
[[ $(kube_admin get node node-a -o jsonpath='{.metadata.labels.shim\.containerd\.x-k8s\.io/cert}') == true ]] ||
    fail "the label set with the client certificate is missing"
pass "node-a, authenticated by its client certificate, labelled its own Node"
expect_error "node-a by certificate patching node-b" "refused by the API server" 'is not allowed to modify node "node-b"' \
    "$probe" "$KUBE_DIR/node-a-cert.kubeconfig" merge-patch nodes - node-b \
    '{"metadata":{"labels":{"shim.containerd.x-k8s.io/cert":"true"}}}'

echo "--- TLS is verified: a CA that did not sign the server is refused"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj "/CN=other-ca" \
    -keyout "$KUBE_DIR/other-ca.key" -out "$KUBE_DIR/other-ca.crt" 2>/dev/null
sed -e "s|certificate-authority: .*|certificate-authority: $KUBE_DIR/other-ca.crt|" "$admin" \
    >"$KUBE_DIR/other-ca.kubeconfig"
expect_error "a server certificate from an unknown CA" "network error" 'SSL' \
    "$probe" "$KUBE_DIR/other-ca.kubeconfig" get nodes - node-a
echo "PASS"
