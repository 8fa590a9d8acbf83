#!/usr/bin/env bash
# A shim built for another architecture is refused by the pre-flight before anything changes:
# the error names the architecture, and the store and bin/ stay exactly as they were.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest}/tests/support/common.sh"
sk_init

# A copy of Debian's shim whose ELF header claims another machine (EM_AARCH64 = 183 on x86_64,
# EM_X86_64 = 62 elsewhere): the kernel would refuse to run it, shimkeeper must say why first.
binary="$(shim_binary_for demo)"
mkdir -p "$T/staging" "$T/www"
install -m 0755 /usr/bin/containerd-shim-runc-v2 "$T/staging/$binary"
if [[ "$(uname -m)" == x86_64 ]]; then machine=183; want=aarch64; else machine=62; want=x86; fi
printf "$(printf '\\x%02x' "$machine")" | dd of="$T/staging/$binary" bs=1 seek=18 conv=notrunc status=none
tar -C "$T/staging" -czf "$T/www/foreign.tar.gz" "$binary"
sk_start_server "$T/www"
write_shim_toml "$ROOT/etc/shimkeeper/shims.d/demo.toml" demo demo "$SERVER_URL/foreign.tar.gz" \
    "$(sha256_of "$T/www/foreign.tar.gz")"

store="$ROOT/var/lib/shimkeeper"
expect_exit 1 sk fetch
expect_output_contains "$want"
expect_output_contains "$binary"
[[ -z "$(ls -A "$store/store/sha256" 2>/dev/null)" ]] || fail "the foreign binary reached the store"
[[ -z "$(ls -A "$store/bin" 2>/dev/null)" ]] || fail "bin/ changed"
[[ -z "$(ls -A "$store/tmp" 2>/dev/null)" ]] || fail "tmp/ holds leftovers"

# apply refuses it the same way and leaves containerd's config alone.
mkdir -p "$ROOT/etc/containerd"
printf 'version = 2\n# keep me\n' >"$ROOT/etc/containerd/config.toml"
config_before="$(sha256_of "$ROOT/etc/containerd/config.toml")"
expect_exit 1 sk apply --no-restart
expect_output_contains "$want"
[[ "$(sha256_of "$ROOT/etc/containerd/config.toml")" == "$config_before" ]] ||
    fail "a refused apply changed containerd's config"
