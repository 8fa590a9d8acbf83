#!/usr/bin/env bash
# Redirects: a short chain is followed, a redirect to file:// and a chain longer than five
# are refused without retry, and nothing reaches the store.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest, or export it}/tests/support/common.sh"
sk_init

mkdir -p "$T/www"
make_shim_archive "$(shim_binary_for demo)" "$T/www/demo.tar.gz"
SHA="$(sha256_of "$T/www/demo.tar.gz")"
sk_start_server "$T/www"
SHIMS="$ROOT/etc/shimkeeper/shims.d"
STORE="$ROOT/var/lib/shimkeeper"

write_shim_toml "$SHIMS/demo.toml" demo demo "$SERVER_URL/redirect/3/demo.tar.gz" "$SHA"
expect_exit 0 sk fetch
[[ -d "$STORE/store/sha256/$SHA" ]] || fail "a 3-hop redirect chain was not followed"
rm -rf "$STORE" "$SHIMS/demo.toml"

TARGET="file%3A%2F%2F%2Fetc%2Fpasswd"
write_shim_toml "$SHIMS/demo.toml" demo demo "$SERVER_URL/redirect-to/$TARGET" "$SHA"
expect_exit 1 sk fetch
expect_output_contains "file:///etc/passwd"
expect_output_contains "refused"
[[ "$(sk_requests_for "/redirect-to/$TARGET")" == 1 ]] || fail "a refused redirect was retried"
[[ -z "$(ls -A "$STORE/store/sha256" 2>/dev/null)" ]] || fail "a refused download reached the store"
rm "$SHIMS/demo.toml"

sk_reset_requests
write_shim_toml "$SHIMS/demo.toml" demo demo "$SERVER_URL/redirect/6/demo.tar.gz" "$SHA"
expect_exit 1 sk fetch
expect_output_contains "more than 5 redirects"
[[ "$(sk_requests_for /demo.tar.gz)" == 0 ]] || fail "the 6-hop chain reached the file"
[[ "$(sk_requests)" == 6 ]] || fail "expected the 6 redirects only, the server saw $(sk_requests)"
