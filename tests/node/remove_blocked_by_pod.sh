#!/usr/bin/env bash
# A handler is never pulled from under a running pod. A shim whose drop-in is removed while a pod
# sandbox still runs on its handler stays installed (config, bin/ link and CRI all keep it); `apply`
# says the removal waits and why, `status` says so too, and the daemon, left running, removes the
# handler on its own soon after the sandbox is gone (nothing it watches changes then: it looks again
# every k_blocked_removal_recheck, 10 s).
# containerd-lines: 1.6 2
# seconds-about: 20
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
node_up "$T/node"
node_shim_serve
node_shim_declare demo v1
expect_exit 0 ski apply
expect_output_contains "Committed generation 1"

node_pause_image >/dev/null
pod=$(node_cri_client run-pod runs-demo demo "$NODE_CGROUP_PARENT")
node_cri_client list-pods | grep -q "runs-demo.*demo" ||
    fail "test setup: ListPodSandbox does not show the sandbox on handler demo: $(node_cri_client list-pods)"

# The drop-in goes while the pod runs: nothing is removed, and apply says why.
rm "$NODE_SHIMS_D/10-demo.toml"
node_count_starts
expect_exit 0 ski apply
expect_output_contains "removal of demo waits, blocked by 1 pod(s) on handler demo: shimkeeper-test/runs-demo"
[[ "$(node_handler_presence demo)" == present ]] ||
    fail "the handler demo is $(node_handler_presence demo) while a pod sandbox still runs on it"
(($(node_starts) == 0)) || fail "containerd restarted $(node_starts) times for a removal that waits"
expect_exit 0 ski status
expect_output_contains "removal of demo waits: blocked by 1 pod(s) on handler demo"

# The daemon keeps looking and removes the handler once the sandbox is gone.
status_file=$T/status.json
"$SHIMKEEPER" -c "$NODE_AGENT_CONFIG" run --status-file "$status_file" >"$T/daemon.log" 2>&1 &
daemon=$!
sk_track "$daemon"
daemon_says_blocked() {
    python3 -S - "$status_file" <<'PY' 2>/dev/null
import json, sys
r = json.load(open(sys.argv[1])).get("result") or {}
sys.exit(0 if "blocked by 1 pod(s)" in (r.get("blocked") or {}).get("demo", "") else 1)
PY
}
node_wait_for 60 daemon_says_blocked ||
    fail "the daemon's status does not say the removal of demo is blocked: $(cat "$status_file")"
[[ "$(node_handler_presence demo)" == present ]] ||
    fail "the daemon removed handler demo while the sandbox still runs: $(cat "$T/daemon.log")"

node_cri_client stop-pod "$pod" >/dev/null
node_cri_client remove-pod "$pod" >/dev/null
demo_gone() { [[ "$(node_handler_presence demo)" == absent ]]; }
# A bound, not a pace: CI once saw the bus and containerd both stall for ~30 s under the peers'
# build; the daemon then failed, retried and had not finished within 40 s.
node_wait_for 120 demo_gone ||
    fail "the daemon did not remove handler demo after its sandbox went (now $(node_handler_presence demo)): $(cat "$T/daemon.log")"
node_cri_has_handler runc || fail "the default runc handler is gone from CRI Status"
kill -TERM "$daemon"
wait "$daemon" || fail "the daemon did not stop cleanly: $(cat "$T/daemon.log")"
echo "ok: the removal of demo waited for its pod sandbox, and the daemon removed it after"
