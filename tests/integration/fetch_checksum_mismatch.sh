#!/usr/bin/env bash
# A wrong sha256 fails the fetch of that shim with both digests and the URL in the message,
# leaves the store exactly as it was, and does not stop the other shims.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest, or export it}/tests/support/common.sh"
sk_init

mkdir -p "$T/www"
make_shim_archive "$(shim_binary_for good)" "$T/www/good.tar.gz"
make_shim_archive "$(shim_binary_for bad)" "$T/www/bad.tar.gz"
sk_start_server "$T/www"
SHIMS="$ROOT/etc/shimkeeper/shims.d"
write_shim_toml "$SHIMS/good.toml" good good "$SERVER_URL/good.tar.gz" "$(sha256_of "$T/www/good.tar.gz")"
expect_exit 0 sk fetch
STORE="$ROOT/var/lib/shimkeeper"
before="$(tree_digest "$STORE")"

ACTUAL="$(sha256_of "$T/www/bad.tar.gz")"
WRONG="$(printf 'something else' | sha256sum | cut -d' ' -f1)"
write_shim_toml "$SHIMS/bad.toml" bad bad "$SERVER_URL/bad.tar.gz" "$WRONG"
expect_exit 1 sk fetch
expect_output_contains "checksum mismatch"
expect_output_contains "$WRONG"
expect_output_contains "$ACTUAL"
expect_output_contains "$SERVER_URL/bad.tar.gz"
[[ "$(tree_digest "$STORE")" == "$before" ]] ||
    fail "the store changed after a checksum mismatch: $(diff <(echo "$before") <(tree_digest "$STORE"))"
[[ "$(sk_requests_for /bad.tar.gz)" == 1 ]] || fail "a checksum mismatch must not be retried"
