#!/usr/bin/env bash
# What `plan` prints is what `apply` then does (they share one plan), on an image root with
# apply --no-restart:
# - a change of `version` alone is an upgrade and a new generation in both, with no restart;
# - two shims with one binary are refused by both, exit 2, naming both places;
# - an unverified shim whose URL is unchanged is not downloaded again by either;
# - a generation keeps the whole spec: rolling back to a generation that adopted a handler works;
# - a broken drop-in does not stop `rollback` or `status`.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest}/tests/support/common.sh"
sk_init

mkdir -p "$T/www" "$ROOT/etc/containerd"
make_shim_archive "$(shim_binary_for demo)" "$T/www/demo.tar.gz"
sk_start_server "$T/www"
config="$ROOT/etc/containerd/config.toml"
containerd config default >"$config"
# A handler the operator defined by hand, which the shim takes over (adopt = true).
printf '\n[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.demo]\n  runtime_type = "io.containerd.runc.v2"\n' >>"$config"
drop_in="$ROOT/etc/shimkeeper/shims.d/10-demo.toml"
digest=$(sha256_of "$T/www/demo.tar.gz")
declare_demo() { # VERSION
    rm -f "$drop_in"
    write_shim_toml "$drop_in" demo demo "$SERVER_URL/demo.tar.gz" "$digest"
    sed -i "s/^binary = .*/&\nversion = \"$1\"\nadopt = true/" "$drop_in"
}

declare_demo 1.0
expect_exit 0 sk apply --no-restart
expect_output_contains "Committed generation 1"

# Version only: plan names it, apply records generation 2, and neither touches containerd.
declare_demo 1.1
expect_exit 0 sk plan -o json
python3 -S - "$OUT" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
action = plan["actions"][0]
assert action["action"] == "upgrade", action
assert action["reasons"] == ["version 1.0 -> 1.1"], action["reasons"]
assert plan["new_generation"] is True and plan["converged"] is False, plan
assert plan["config_changes"] == [] and plan["restart_needed"] is False, plan
PY
stamp=$(stat -c %y "$config")
expect_exit 0 sk apply --no-restart
expect_output_contains "Committed generation 2"
[[ "$(stat -c %y "$config")" == "$stamp" ]] || fail "a version-only change rewrote the config"
expect_exit 0 sk plan
expect_output_contains "Nothing to do."

# Rollback to generation 1 re-installs adopt = true as recorded, with a broken drop-in in place.
printf '[[shim]]\nname = "broken\n' >"$ROOT/etc/shimkeeper/shims.d/20-broken.toml"
expect_exit 0 sk rollback --no-restart
expect_output_contains "Committed generation 1"
expect_exit 0 sk status -o json
python3 -S - "$OUT" <<'PY'
import json, sys
status = json.load(open(sys.argv[1]))
assert status["current_generation"] == 1, status["current_generation"]
assert "20-broken.toml:2" in status["desired_error"], status["desired_error"]
current = [g for g in status["generations"] if g["current"]][0]
assert current["shims"][0]["adopt"] is True and current["shims"][0]["version"] == "1.0", current
PY
expect_exit 2 sk apply --no-restart
expect_output_contains "20-broken.toml:2"
rm "$ROOT/etc/shimkeeper/shims.d/20-broken.toml"

# One binary for two shims: refused the same way by plan and apply, before anything changes.
before=$(tree_digest "$ROOT")
write_shim_toml "$ROOT/etc/shimkeeper/shims.d/30-twin.toml" twin twin "$SERVER_URL/demo.tar.gz" "$digest"
sed -i "s/^binary = .*/binary = \"$(shim_binary_for demo)\"/" "$ROOT/etc/shimkeeper/shims.d/30-twin.toml"
for command in plan "apply --no-restart"; do
    # shellcheck disable=SC2086 # the command and its flag are two words
    expect_exit 2 sk $command
    expect_output_contains "binary '$(shim_binary_for demo)' of shim 'twin' is already used by shim 'demo'"
done
rm "$ROOT/etc/shimkeeper/shims.d/30-twin.toml"
[[ "$(tree_digest "$ROOT")" == "$before" ]] || fail "a refused plan or apply changed the root"

# Unverified and unchanged URL: neither plan nor apply downloads it again.
rm -f "$drop_in"
write_shim_toml "$drop_in" demo demo "$SERVER_URL/demo.tar.gz" ""
sed -i "s/^binary = .*/&\nadopt = true/" "$drop_in"
expect_exit 0 sk apply --no-restart
sk_reset_requests
expect_exit 0 sk plan
expect_output_contains "Nothing to do."
expect_exit 0 sk apply --no-restart
expect_output_contains "Nothing to do"
[[ "$(sk_requests)" == 0 ]] || fail "an unchanged unverified shim was downloaded again"
echo "ok: plan and apply agree"
