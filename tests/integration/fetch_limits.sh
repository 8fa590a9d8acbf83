#!/usr/bin/env bash
# The [fetch] limits of the agent config: a stalled server is given up on within the stall
# timeout (plus a bounded margin), and a body over max_size is refused; neither leaves files.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest, or export it}/tests/support/common.sh"
sk_init

mkdir -p "$T/www"
make_shim_archive "$(shim_binary_for demo)" "$T/www/demo.tar.gz"
SHA="$(sha256_of "$T/www/demo.tar.gz")"
sk_start_server "$T/www"
SHIMS="$ROOT/etc/shimkeeper/shims.d"
STORE="$ROOT/var/lib/shimkeeper"
cat >"$ROOT/etc/shimkeeper/shimkeeper.toml" <<TOML
[fetch]
stall_timeout = 1
retries = 0
TOML

write_shim_toml "$SHIMS/demo.toml" demo demo "$SERVER_URL/stall/demo.tar.gz" "$SHA"
started=$(date +%s%N)
expect_exit 1 sk fetch
elapsed_ms=$((($(date +%s%N) - started) / 1000000))
expect_output_contains "no data received for 1.0 s"
((elapsed_ms < 7000)) || fail "the 1 s stall timeout took ${elapsed_ms} ms to fire"
[[ -z "$(ls -A "$STORE/tmp")" ]] || fail "a stalled download left files in tmp/"
rm "$SHIMS/demo.toml"

# Debian's runc shim is megabytes: both an announced length and a streamed body exceed 100000.
echo "max_size = 100000" >>"$ROOT/etc/shimkeeper/shimkeeper.toml"
for path in demo.tar.gz nolength/demo.tar.gz; do
    write_shim_toml "$SHIMS/demo.toml" demo demo "$SERVER_URL/$path" "$SHA"
    expect_exit 1 sk fetch
    expect_output_contains "97.7 KiB limit (fetch max_size)"
    [[ -z "$(ls -A "$STORE/tmp")" ]] || fail "an oversized download left files in tmp/"
    [[ -z "$(ls -A "$STORE/store/sha256")" ]] || fail "an oversized download reached the store"
    rm "$SHIMS/demo.toml"
done
