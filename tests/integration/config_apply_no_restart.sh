#!/usr/bin/env bash
# apply --no-restart on an image root (no containerd running): the config gains exactly one
# managed block pointing at the node path of the shim, a second apply writes nothing, plan says
# there is nothing to do, and removing the shim gives the original config back byte for byte.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest}/tests/support/common.sh"
sk_init

mkdir -p "$T/www" "$ROOT/etc/containerd"
make_shim_archive "$(shim_binary_for demo)" "$T/www/demo.tar.gz"
sk_start_server "$T/www"
config="$ROOT/etc/containerd/config.toml"
containerd config default >"$config"
printf '# the operator wrote this comment\r\n' >>"$config" # an odd line ending stays as it is
cp "$config" "$T/original.toml"
drop_in="$ROOT/etc/shimkeeper/shims.d/10-demo.toml"
write_shim_toml "$drop_in" demo demo "$SERVER_URL/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")"

expect_exit 0 sk plan
expect_output_contains "+[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.demo]"
expect_output_contains "containerd restart: needed"

expect_exit 0 sk apply --no-restart
expect_output_contains "Committed generation 1"
expect_output_contains "NOT restarted"
grep -qF '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.demo]' "$config" ||
    fail "the runtime table is missing"
grep -qF 'runtime_type = "/var/lib/shimkeeper/bin/containerd-shim-demo-v2"' "$config" ||
    fail "the runtime does not point at the node path of the shim"
! grep -qF "$ROOT" "$config" || fail "a --root path leaked into the config"
[[ "$(readlink "$ROOT/var/lib/shimkeeper/bin/containerd-shim-demo-v2")" == /var/lib/shimkeeper/store/sha256/* ]] ||
    fail "bin/ link does not hold the node path"
# Outside the block the file is byte-identical: drop the block, compare with the original.
sed '/^# shimkeeper:begin shim=demo /,/^# shimkeeper:end shim=demo/d' "$config" >"$T/outside.toml"
cmp -s "$T/outside.toml" "$T/original.toml" || fail "text outside the managed block changed"
containerd --config "$config" config dump >"$T/dump.toml" || fail "containerd cannot read the edited config"
grep -qF 'runtime_type = "/var/lib/shimkeeper/bin/containerd-shim-demo-v2"' "$T/dump.toml" ||
    fail "containerd's config dump does not show the runtime"

# Idempotent: nothing is written, plan has nothing to do.
stamp="$(stat -c %y "$config")"
journal="$(sha256_of "$ROOT/var/lib/shimkeeper/state/journal.json")"
expect_exit 0 sk apply --no-restart
expect_output_contains "Nothing to do"
[[ "$(stat -c %y "$config")" == "$stamp" ]] || fail "a second apply rewrote the config"
[[ "$(sha256_of "$ROOT/var/lib/shimkeeper/state/journal.json")" == "$journal" ]] ||
    fail "a second apply wrote the journal"
expect_exit 0 sk plan
expect_output_contains "Nothing to do."

# Removal: exactly the block goes, the original file comes back byte for byte.
rm "$drop_in"
expect_exit 0 sk apply --no-restart
cmp -s "$config" "$T/original.toml" || fail "removing the shim did not restore the original config"
[[ ! -e "$ROOT/var/lib/shimkeeper/bin/containerd-shim-demo-v2" ]] || fail "the bin/ link is still there"
expect_exit 0 sk status -o json
python3 -S - "$OUT" <<'PY'
import json, sys
status = json.load(open(sys.argv[1]))
assert status["current_generation"] == 2, status["current_generation"]
assert status["last_transaction"]["result"] == "committed", status["last_transaction"]
PY
