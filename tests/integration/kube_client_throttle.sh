#!/usr/bin/env bash
# The Kubernetes client asks again after a 429 (the API server shedding load), waiting its
# Retry-After, up to three times; a server that keeps refusing gets an error that names the 429.
# The "API server" is the test's HTTPS server with a path prefix that answers 429 to the first
# requests of a URL (artifact_server.py's /retry-after/), driven through tests' kube-probe.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest, or export it}/tests/support/common.sh"
sk_init
probe="$SHIMKEEPER_BUILD_DIR/tests/support/kube-probe"
[[ -x "$probe" ]] || fail "$probe is not built"

mkdir -p "$T/www/api/v1/nodes"
printf '{"kind":"Node","apiVersion":"v1","metadata":{"name":"n1"}}\n' >"$T/www/api/v1/nodes/n1"
sk_start_server "$T/www" --tls
kubeconfig() { # PREFIX: a kubeconfig whose server URL carries PREFIX
    cat >"$T/kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters: [{name: test, cluster: {server: "$SERVER_URL$1", certificate-authority: "$SERVER_CA"}}]
users: [{name: test, user: {token: not-checked}}]
contexts: [{name: test, context: {cluster: test, user: test}}]
current-context: test
YAML
    echo "$T/kubeconfig"
}
requests_for() { curl -fsS --cacert "$SERVER_CA" "$SERVER_URL/_requests" |
    python3 -S -c 'import json, sys; print(json.load(sys.stdin)["paths"].get(sys.argv[1], 0))' "$1"; }

# Two 429s, then the object: three requests, the answer is the object.
out=$("$probe" "$(kubeconfig /retry-after/1/2)" get nodes - n1)
[[ $(python3 -S -c 'import json, sys; print(json.loads(sys.argv[1])["metadata"]["name"])' "$out") == n1 ]] ||
    fail "the object after two 429s was not returned: $out"
n=$(requests_for /retry-after/1/2/api/v1/nodes/n1)
((n == 3)) || fail "expected 3 requests (two 429s, then 200), the server saw $n"

# Always 429: one request and three more, then an error that says so.
if "$probe" "$(kubeconfig /retry-after/1/9)" get nodes - n1 >"$T/out" 2>"$T/err"; then
    fail "a server answering only 429 gave a result: $(cat "$T/out")"
fi
grep -q "429" "$T/err" || fail "the error does not name the 429: $(cat "$T/err")"
n=$(requests_for /retry-after/1/9/api/v1/nodes/n1)
((n == 4)) || fail "expected 4 requests (the first and three more), the server saw $n"
echo "PASS"
