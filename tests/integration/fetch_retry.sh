#!/usr/bin/env bash
# Transient server errors are retried with a visible note and the fetch then succeeds;
# a 404 is asked once and reported with its status and URL.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest, or export it}/tests/support/common.sh"
sk_init

mkdir -p "$T/www"
make_shim_archive "$(shim_binary_for demo)" "$T/www/demo.tar.gz"
SHA="$(sha256_of "$T/www/demo.tar.gz")"
sk_start_server "$T/www"
SHIMS="$ROOT/etc/shimkeeper/shims.d"

write_shim_toml "$SHIMS/demo.toml" demo demo "$SERVER_URL/fail/503/2/demo.tar.gz" "$SHA"
expect_exit 0 sk fetch
expect_output_contains "attempt 1 failed (HTTP 503)"
expect_output_contains "attempt 2 failed (HTTP 503)"
[[ "$(sk_requests_for /fail/503/2/demo.tar.gz)" == 3 ]] ||
    fail "expected 3 requests, the server saw $(sk_requests_for /fail/503/2/demo.tar.gz)"
[[ -d "$ROOT/var/lib/shimkeeper/store/sha256/$SHA" ]] || fail "the artifact is not in the store"

rm "$SHIMS/demo.toml"
write_shim_toml "$SHIMS/demo.toml" demo demo "$SERVER_URL/missing.tar.gz" "$SHA"
rm -rf "$ROOT/var/lib/shimkeeper"
expect_exit 1 sk fetch
expect_output_contains "HTTP 404"
expect_output_contains "$SERVER_URL/missing.tar.gz"
expect_output_lacks "retrying"
[[ "$(sk_requests_for /missing.tar.gz)" == 1 ]] || fail "a 404 must be asked only once"
