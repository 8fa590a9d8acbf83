#!/usr/bin/env bash
# A download that breaks off mid-way is continued where it stopped (HTTP Range) when the shim
# pins a sha256, so a large shim over a bad link is not fetched from zero at every retry; a
# server that ignores Range, and an unverified shim, start over instead. Either way the stored
# artifact is the exact one.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest, or export it}/tests/support/common.sh"
sk_init

mkdir -p "$T/www"
make_shim_archive "$(shim_binary_for demo)" "$T/www/demo.tar.gz"
SHA="$(sha256_of "$T/www/demo.tar.gz")"
SIZE=$(stat -c %s "$T/www/demo.tar.gz")
sk_start_server "$T/www"
SHIMS="$ROOT/etc/shimkeeper/shims.d"
STORE="$ROOT/var/lib/shimkeeper/store/sha256"

# fetch_through PREFIX SHA: fetches demo through the server mode PREFIX into an empty store.
fetch_through() {
    rm -rf "$ROOT/var/lib/shimkeeper" "$SHIMS"
    sk_reset_requests # truncate-once counts per URL: every case starts with a break again
    write_shim_toml "$SHIMS/demo.toml" demo demo "$SERVER_URL/$1/demo.tar.gz" "$2"
    expect_exit 0 sk fetch
    [[ -d "$STORE/$SHA" ]] || fail "$1: the artifact is not in the store under its sha256"
}

fetch_through truncate-once "$SHA"
expect_output_contains "resuming at byte $((SIZE / 2))"
[[ "$(sk_requests_for /truncate-once/demo.tar.gz)" == 2 ]] || fail "resume: expected 2 requests"
sent=$(sk_bytes_for /truncate-once/demo.tar.gz)
((sent == SIZE)) || fail "resume: the server sent $sent bytes for a $SIZE-byte file (want exactly $SIZE)"

fetch_through truncate-once-norange "$SHA"
[[ "$(sk_requests_for /truncate-once-norange/demo.tar.gz)" == 3 ]] ||
    fail "no range support: expected a refused resume and a fresh start (3 requests)"

# Unverified: nothing could prove a joined body, so the retry starts from the first byte.
fetch_through truncate-once ""
expect_output_lacks "resuming at"
sent=$(sk_bytes_for /truncate-once/demo.tar.gz)
((sent == SIZE / 2 + SIZE)) ||
    fail "unverified: expected the whole file again after the break ($sent bytes sent in all)"
echo "ok: broken-off downloads resume only where the result can be proven"
