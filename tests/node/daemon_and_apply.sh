#!/usr/bin/env bash
# The daemon running while someone runs `shimkeeper apply` by hand on the same change (a new drop-in
# written, then apply at once, while the daemon's inotify fires too). The node lock lets one of them
# make the change and the other find nothing to do: one containerd restart in all, and the node
# consistent (config, state.json and CRI agree). The daemon holds the lock only while it reconciles:
# an apply against an idle daemon never waits. The node lock does not depend on the containerd line:
# one line is enough.
# containerd-lines: 1.6
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
node_up "$T/node"
node_shim_serve
node_shim_declare demo v1
status_file=$T/status.json

"$SHIMKEEPER" -c "$NODE_AGENT_CONFIG" run --status-file "$status_file" >"$T/daemon.log" 2>&1 &
daemon=$!
sk_track "$daemon"
daemon_generation() {
    python3 -S -c 'import json, sys
s = json.load(open(sys.argv[1]))
r = s.get("result") or {}
print(r.get("generation", 0) if r.get("result") == "committed" else -1)' "$status_file" 2>/dev/null
}
daemon_at() { [[ "$(daemon_generation)" == "$1" ]]; }
node_wait_for 60 daemon_at 1 || fail "the daemon did not converge: $(cat "$T/daemon.log")"

# Idle daemon: apply takes the lock at once.
expect_exit 0 ski --no-wait apply
expect_output_contains "Nothing to do"

node_count_starts
node_shim_declare second v1
expect_exit 0 ski apply
node_wait_for 60 daemon_at 2 ||
    fail "the daemon did not settle on generation 2: $(cat "$status_file")"
[[ "$(node_starts)" == 1 ]] || fail "one change made $(node_starts) containerd restarts"
for name in demo second; do
    [[ "$(node_handler_presence "$name")" == present ]] ||
        fail "$name is $(node_handler_presence "$name") after the daemon and apply raced"
done
expect_exit 0 ski -o json status
python3 -S - "$OUT" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["current_generation"] == 2, s["current_generation"]
assert s["last_transaction"]["result"] in ("committed",), s["last_transaction"]
PY
kill -TERM "$daemon"
wait "$daemon" || fail "the daemon did not stop cleanly: $(cat "$T/daemon.log")"
echo "ok: daemon and manual apply made one change with one restart"
