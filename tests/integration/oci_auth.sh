#!/usr/bin/env bash
# A registry that wants credentials: TLS with htpasswd (HTTP basic), then token auth (the
# registry verifies a JWT that the test's issuer signs). Without credentials the fetch fails
# with a message naming the registry and how to give credentials; with an auth file it
# succeeds, and the token server is asked once for the whole fetch. Failures change nothing.
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest, or export it}/tests/support/oci_scenario.sh"
WANT="$(sha256_of "$SHIM_SOURCE")"
make_image "$T/layout" v1 "$(node_arch)" put_shim
IMAGE="$(push_image "$T/layout" v1 demo:v1)"
reg_stop

# --- TLS + htpasswd ---------------------------------------------------------------------------
sk_make_cert "$T/tls"
htpasswd -Bbc "$T/htpasswd" alice s3cret >/dev/null 2>&1
reg_start "$DATA" --tls "$T/tls" --htpasswd "$T/htpasswd"
oci_hosts_toml "$REG" "server = \"https://$REG\"
ca = \"$T/tls/cert.pem\""
oci_agent_settings "auth_file = \"$T/auth.json\""
oci_shim "$REG/demo:v1@$IMAGE" "usr/bin/$BIN"
expect_fetch_refused 1 "registry $REG" "HTTP 401" "no credentials for $REG were found" \
    "$T/auth.json" "skopeo login"

auth_file "$T/auth.json" "$REG" alice:wrong
expect_fetch_refused 1 "registry $REG" "HTTP 401" "refused the credentials for $REG in $T/auth.json"

auth_file "$T/auth.json" "$REG" alice:s3cret
expect_exit 0 sk fetch
cmp -s "$STORE/store/sha256/$WANT/$BIN" "$SHIM_SOURCE" || fail "the stored binary differs"
reg_stop
oci_empty_store
rm -rf "$ROOT/etc/containerd/certs.d/$REG"

# --- token auth -------------------------------------------------------------------------------
sk_make_cert "$T/issuer"
token_server_start "$T/issuer" bob:hunter2
reg_start "$DATA" --token "$TOKEN_REALM" "$T/issuer/cert.pem"
oci_hosts_toml "$REG" "server = \"http://$REG\""
oci_shim "$REG/demo:v1@$IMAGE" "usr/bin/$BIN"
rm -f "$T/auth.json"
expect_fetch_refused 1 "registry $REG" "HTTP 401" "no credentials for $REG were found"
grep -q "scope=repository%3Ademo%3Apull" "$TOKEN_LOG" || fail "no token was asked for: $(cat "$TOKEN_LOG")"

: >"$TOKEN_LOG"
auth_file "$T/auth.json" "$REG" bob:hunter2
expect_exit 0 sk fetch
cmp -s "$STORE/store/sha256/$WANT/$BIN" "$SHIM_SOURCE" || fail "the stored binary differs"
# One token for the manifest and the layer alike.
[[ "$(grep -c 'authorized=True' "$TOKEN_LOG")" == 1 ]] ||
    fail "expected one token request, the issuer saw: $(cat "$TOKEN_LOG")"
