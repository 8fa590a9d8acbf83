#!/usr/bin/env bash
# Scenario 2: applying a state the node already has is a no-op an operator can verify: containerd
# was not restarted (same InvocationID and ActiveEnterTimestamp, no new start), not a byte of the
# containerd config, the store or the journal was written, and apply says there was nothing to do.
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
node_up "$T/node"
node_shim_serve
node_shim_declare demo v1
expect_exit 0 ski apply
expect_output_contains "Committed generation 1"

node_count_starts
identity=$(node_unit_identity)
files=$(node_files_fingerprint)
journal=$(sha256_of "$NODE_STORE_DIR/state/journal.json")
sk_reset_requests

expect_exit 0 ski apply
expect_output_contains "Nothing to do"
expect_output_lacks "restarted"

[[ "$(node_unit_identity)" == "$identity" ]] ||
    fail "containerd was restarted: InvocationID/ActiveEnterTimestamp went from '$identity' to" \
        "'$(node_unit_identity)'"
(($(node_starts) == 0)) || fail "containerd.service started $(node_starts) time(s) during a no-op"
[[ "$(sha256_of "$NODE_STORE_DIR/state/journal.json")" == "$journal" ]] ||
    fail "journal.json changed during a no-op"
diff <(printf '%s\n' "$files") <(node_files_fingerprint) >&2 ||
    fail "files changed during a no-op (diff above: config folder and store, with mtimes)"
(($(sk_requests) == 0)) || fail "a no-op apply downloaded: $(sk_requests) request(s) to the server"
[[ "$(node_handler_binary demo)" == "$NODE_STORE_DIR/bin/$(shim_binary_for demo)" ]] ||
    fail "handler demo is no longer registered after the no-op"

# JSON output says the same thing to a script.
expect_exit 0 ski -o json apply
python3 -S -c 'import json, sys
out = json.load(open(sys.argv[1]))
assert out["changed"] is False and out["restarts"] == 0, out' "$OUT" ||
    fail "apply -o json does not report changed=false, restarts=0: $(cat "$OUT")"
[[ "$(node_unit_identity)" == "$identity" ]] || fail "containerd was restarted by apply -o json"
echo "ok: a second apply restarted nothing, wrote nothing, downloaded nothing"
