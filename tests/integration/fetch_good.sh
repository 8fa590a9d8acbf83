#!/usr/bin/env bash
# `shimkeeper fetch` downloads, verifies and unpacks a shim into the content-addressed store,
# reports progress as plain lines when stderr is not a terminal, touches neither bin/ nor
# containerd, and a second fetch of the same digest asks the server nothing.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest, or export it}/tests/support/common.sh"
sk_init

BIN="$(shim_binary_for demo)"
mkdir -p "$T/www"
make_shim_archive "$BIN" "$T/www/demo.tar.gz"
SHA="$(sha256_of "$T/www/demo.tar.gz")"
sk_start_server "$T/www"
write_shim_toml "$ROOT/etc/shimkeeper/shims.d/demo.toml" demo demo "$SERVER_URL/demo.tar.gz" "$SHA"
STORE="$ROOT/var/lib/shimkeeper"

expect_exit 0 sk fetch
expect_output_contains "fetch demo: downloading $SERVER_URL/demo.tar.gz"
expect_output_contains "sha256 $SHA"
[[ -x "$STORE/store/sha256/$SHA/$BIN" ]] || fail "the store lacks sha256/$SHA/$BIN"
cmp -s "$STORE/store/sha256/$SHA/$BIN" /usr/bin/containerd-shim-runc-v2 ||
    fail "the stored binary differs from the packed one"
[[ "$(sk_requests)" == 1 ]] || fail "expected 1 request, the server saw $(sk_requests)"
[[ -z "$(ls -A "$STORE/tmp")" ]] || fail "fetch left files in tmp/: $(ls -A "$STORE/tmp")"
[[ -z "$(ls -A "$STORE/bin" 2>/dev/null)" ]] || fail "fetch must not link anything into bin/"
[[ ! -e "$ROOT/etc/containerd" ]] || fail "fetch must not touch containerd's config"

before="$(tree_digest "$STORE")"
expect_exit 0 sk fetch
expect_output_contains "already in the store"
[[ "$(sk_requests)" == 1 ]] || fail "the second fetch downloaded again"
[[ "$(tree_digest "$STORE")" == "$before" ]] || fail "the second fetch changed the store"

# Scripts get the same facts as JSON, and no progress lines.
expect_exit 0 sk -o json fetch
python3 -S - "$OUT" "$SHA" <<'PY' || fail "unexpected JSON from fetch -o json: $(cat "$OUT")"
import json, sys
doc = json.load(open(sys.argv[1]))
shim = doc["shims"][0]
assert doc["failed"] == 0 and shim["name"] == "demo" and shim["ok"], doc
assert shim["digest"] == sys.argv[2], doc
PY
