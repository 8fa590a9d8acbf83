# Admission tests of the Shim CRD against the test bed (source after kube_up):
#   shim_yaml NAME SPEC-LINES              a Shim whose spec is SPEC-LINES (YAML, indented under
#                                          spec), after `runtimeType: $SHIM_RUNTIME_TYPE` when set
#   refused NAME EXPECTED-MESSAGE SPEC-LINES   apply must fail, name the problem, create nothing,
#                                              every rule evaluated
#   accepted NAME SPEC-LINES                   apply must succeed and the object exist
#   good_fetch, k_sha, k_url               a well-formed fetchStrategy and its parts
k_sha=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
k_url=https://artifacts.example.org/containerd-shim-demo-v2.tar.gz

shim_yaml() {
    printf 'apiVersion: containerd.x-k8s.io/v1alpha1\nkind: Shim\nmetadata:\n  name: %s\n' "$1"
    printf 'spec:\n'
    [[ -z ${SHIM_RUNTIME_TYPE:-} ]] || printf '  runtimeType: %s\n' "$SHIM_RUNTIME_TYPE"
    printf '%s\n' "$2" | sed 's/^/  /'
}

good_fetch="fetchStrategy:
  type: anonymousHttp
  anonHttp: {location: $k_url, sha256: $k_sha}"

refused() {
    local name=$1 expected=$2 out
    if out=$(shim_yaml "$name" "$3" | kube_admin apply -f - 2>&1); then
        echo "FAIL: $name was accepted; expected: $expected" >&2
        exit 1
    fi
    if ! grep -qF -- "$expected" <<<"$out"; then
        echo "FAIL: $name was refused without saying \"$expected\"; kubectl said: $out" >&2
        exit 1
    fi
    # A rule that fails to evaluate (a field it reads without has()) still prints its message.
    if grep -qF "evaluating rule" <<<"$out"; then
        echo "FAIL: $name was refused by a rule that could not be evaluated: $out" >&2
        exit 1
    fi
    if kube_admin get shim "$name" >/dev/null 2>&1; then
        echo "FAIL: $name was refused but exists" >&2
        exit 1
    fi
    echo "ok: refused $name: ${out//$'\n'/ }"
}

accepted() {
    local name=$1 out
    out=$(shim_yaml "$name" "$2" | kube_admin apply -f - 2>&1) || {
        echo "FAIL: $name was refused: $out" >&2
        exit 1
    }
    kube_admin get shim "$name" >/dev/null
    echo "ok: accepted $name"
}
