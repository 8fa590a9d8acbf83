#!/usr/bin/env bash
# Bad input is exit code 2 with a message naming the place, and changes nothing on the node.
source "$SHIMKEEPER_SOURCE_DIR/tests/support/common.sh"
sk_init

mkdir -p "$T/artifacts"
make_shim_archive "$(shim_binary_for demo)" "$T/artifacts/demo.tar.gz"
sk_start_server "$T/artifacts"
drop_in="$ROOT/etc/shimkeeper/shims.d/10-demo.toml"
write_shim_toml "$drop_in" demo demo "$SERVER_URL/demo.tar.gz" "$(sha256_of "$T/artifacts/demo.tar.gz")"
before="$(tree_digest "$ROOT")"

# A typo in a key: refused with file, line and a suggestion, for every command.
sed -i 's/^sha256 =/sha265 =/' "$drop_in"
for command in plan fetch apply; do
    expect_exit 2 sk "$command"
    expect_output_contains "10-demo.toml:"
    expect_output_contains "sha265"
done
# status needs only the agent settings: it still answers, and names the broken file.
expect_exit 0 sk status
expect_output_contains "Desired shims: unreadable"
expect_output_contains "10-demo.toml:"
# rollback too: it is refused for its own reason (nothing installed), not for the drop-in.
expect_exit 2 sk rollback --no-restart
expect_output_contains "nothing is installed"

# Malformed TOML.
printf '[[shim]]\nname = "demo\n' >"$drop_in"
expect_exit 2 sk fetch
expect_output_contains "10-demo.toml:2"

# A handler that would inject into containerd's config.
write_shim_toml "$drop_in.tmp" demo 'demo.x] [evil' "$SERVER_URL/demo.tar.gz" "$(sha256_of "$T/artifacts/demo.tar.gz")"
mv "$drop_in.tmp" "$drop_in"
expect_exit 2 sk fetch
expect_output_contains "handler"

# Usage errors.
expect_exit 2 sk frobnicate
expect_exit 2 sk plan -o yaml
expect_exit 2 "$SHIMKEEPER" -c "$T/missing.toml" plan
expect_output_contains "missing.toml"

[[ "$(sk_requests)" == 0 ]] || fail "bad input still made HTTP requests"
rm -f "$drop_in"
after="$(tree_digest "$ROOT")"
before_without_dropin="$(grep -v '^etc/shimkeeper/shims.d/10-demo.toml ' <<<"$before")"
[[ "$after" == "$before_without_dropin" ]] || fail "bad input changed the node root"
