#!/usr/bin/env bash
# One run at a time per node: while an apply holds the node lock (paused at a fault point), a
# second apply with --no-wait fails at once naming the holder, one with a short --lock-timeout
# says what it waits for and gives up, and plan and status answer without waiting. A holder
# SIGKILLed mid-transaction frees the lock at once: the next apply takes it and recovers the
# journal.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest}/tests/support/common.sh"
sk_init
"$SHIMKEEPER" -o json version | grep -q fault_points || skip "not a fault-injection build"

mkdir -p "$T/www" "$ROOT/etc/containerd"
make_shim_archive "$(shim_binary_for demo)" "$T/www/demo.tar.gz"
sk_start_server "$T/www"
containerd config default >"$ROOT/etc/containerd/config.toml"
write_shim_toml "$ROOT/etc/shimkeeper/shims.d/10-demo.toml" demo demo "$SERVER_URL/demo.tar.gz" \
    "$(sha256_of "$T/www/demo.tar.gz")"

# The holder: an apply that stops at "planned" until told to go on.
SHIMKEEPER_FAULT_RUN="planned:echo paused >'$T/paused'; while [ ! -e '$T/go' ]; do sleep 0.05; done" \
    "$SHIMKEEPER" --root "$ROOT" apply --no-restart >"$T/holder.out" 2>&1 &
holder=$!
sk_wait_for_file "$T/paused" 30 || fail "the holding apply never reached its pause"

expect_exit 1 sk --no-wait apply --no-restart
expect_output_contains "locked by pid $holder (shimkeeper apply"
expect_output_contains "--no-wait"
expect_exit 1 sk --lock-timeout 0.5 fetch
expect_output_contains "waiting for the node lock, held by pid $holder"
expect_output_contains "gave up after 0.5 s"
expect_exit 0 sk plan
expect_exit 0 sk status

touch "$T/go"
wait "$holder" || fail "the holding apply failed: $(cat "$T/holder.out")"
grep -q "Committed generation 1" "$T/holder.out" || fail "the holder did not commit"

# A holder killed with the lock: the next run does not wait and recovers its journal.
rm -f "$T/paused" "$T/go"
rm "$ROOT/etc/shimkeeper/shims.d/10-demo.toml"
SHIMKEEPER_FAULT_RUN="links:echo paused >'$T/paused'; while [ ! -e '$T/go' ]; do sleep 0.05; done" \
    "$SHIMKEEPER" --root "$ROOT" apply --no-restart >"$T/holder.out" 2>&1 &
holder=$!
sk_wait_for_file "$T/paused" 30 || fail "the second holder never reached its pause"
kill -9 "$holder"
wait "$holder" 2>/dev/null || true
touch "$T/go" # the hook's shell outlives the killed holder: let it finish
expect_exit 0 sk --no-wait apply --no-restart
expect_output_contains "recovered interrupted transaction"
expect_output_contains "Committed generation 2"
