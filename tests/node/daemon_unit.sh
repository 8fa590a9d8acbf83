#!/usr/bin/env bash
# `shimkeeper run` as a Type=notify unit with WatchdogSec under a real systemd (the harness's user
# manager) driving a real containerd. What an operator checks:
#   - the shipped units/shimkeeper.service passes `systemd-analyze verify` and its security
#     exposure is <= 3.0;
#   - the service reaches active (with Type=notify that means READY=1 arrived);
#   - a new file in shims.d/ converges within seconds: the shim is in the current generation
#     and CRI Status lists its handler;
#   - no watchdog timeout over a 30 s soak (NRestarts stays 0, Result stays success);
#   - `systemctl stop` (SIGTERM) stops it cleanly: Result=success, no core, no kill.
# seconds-about: 35
set -euo pipefail
# What this proves is shimkeeper's (journal, daemon, restart guard), not a config format: the
# oldest and the newest containerd line are enough (keeps scripts/test inside its budget).
# containerd-lines: 1.6 2
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_harness.sh"
node_reexec_in_namespace "$@"

: "${SHIMKEEPER:?}"
if ! "$SHIMKEEPER" --help | grep -qE '^ +run +'; then
    node_skip "$SHIMKEEPER has no 'run' command yet (cli/cmd_run.cpp wires daemon::run_daemon)"
fi

check() {
    local what=$1
    shift
    if "$@"; then
        echo "ok: $what"
    else
        echo "FAIL: $what" >&2
        exit 1
    fi
}

# --- The shipped unit, offline. `verify` insists that ExecStart's binary exists, and the package
# installs it to /usr/bin only later: check a copy that runs the binary under test instead.
unit_copy=$(mktemp -d /tmp/skunit.XXXXXX)
sed "s#^ExecStart=/usr/bin/shimkeeper #ExecStart=$SHIMKEEPER #" \
    "$SHIMKEEPER_SOURCE_DIR/units/shimkeeper.service" >"$unit_copy/shimkeeper.service"
verify_out=$(systemd-analyze verify "$unit_copy/shimkeeper.service" 2>&1) || true
check "systemd-analyze verify is clean (got: ${verify_out:-nothing})" test -z "$verify_out"
exposure=$(systemd-analyze security --offline=true "$SHIMKEEPER_SOURCE_DIR/units/shimkeeper.service" |
    sed -n 's/.*Overall exposure level for shimkeeper.service: \([0-9.]*\).*/\1/p')
check "security exposure $exposure <= 3.0" awk -v e="$exposure" 'BEGIN { exit !(e != "" && e <= 3.0) }'
rm -rf "$unit_copy"

# --- A node, an artifact server, and the daemon as a unit of the node's systemd.
node_up "$(mktemp -d /tmp/skd.XXXXXX)"

artifacts=$NODE_DIR/artifacts
mkdir -p "$artifacts"
staging=$NODE_DIR/staging
mkdir -p "$staging"
install -m 0755 "$NODE_SHIM_RUNC" "$staging/containerd-shim-watched-v2"
tar -C "$staging" -czf "$artifacts/watched.tar.gz" containerd-shim-watched-v2
digest=$(sha256sum "$artifacts/watched.tar.gz" | cut -d' ' -f1)
# The server runs as a unit of the same manager, so node_down stops it with everything else.
systemd-run --user --unit=sk-artifacts --quiet -- python3 \
    "$SHIMKEEPER_SOURCE_DIR/tests/support/artifact_server.py" --dir "$artifacts" \
    --port-file "$NODE_DIR/artifacts.port" --log "$NODE_DIR/log/artifacts.log"
node_wait_for 10 test -s "$NODE_DIR/artifacts.port" || {
    echo "FAIL: the artifact server did not start (see $NODE_DIR/log/artifacts.log)" >&2
    exit 1
}
url=http://127.0.0.1:$(<"$NODE_DIR/artifacts.port")/watched.tar.gz

daemon_unit=shimkeeper-daemon.service
# WatchdogSec=5s, short on purpose: a loop that stopped pinging would be killed several times
# over the soak.
node_agent_unit "$daemon_unit" 5 60 "" run --status-file "$NODE_DIR/run/shimkeeper/status.json"

daemon_prop() { systemctl --user show -p "$1" --value "$daemon_unit"; }

systemctl --user start "$daemon_unit" # returns once READY=1 arrived, or fails
check "the daemon is active (READY=1 received)" test "$(daemon_prop ActiveState)" = active
check "its main process is shimkeeper" \
    test "$(readlink "/proc/$(daemon_prop MainPID)/exe")" = "$(readlink -f "$SHIMKEEPER")"
status_line=$(daemon_prop StatusText)
check "STATUS= says it converged (got: $status_line)" grep -q '^converged' <<<"$status_line"
check "status.json holds the daemon's current state" \
    grep -q '"converged' "$NODE_DIR/run/shimkeeper/status.json"

# --- A new drop-in converges within seconds, without anyone running apply.
current_shims() {
    "$SHIMKEEPER" -c "$NODE_AGENT_CONFIG" status -o json | python3 -S -c '
import json, sys
status = json.load(sys.stdin)
for gen in status["generations"]:
    if gen["current"]:
        print("\n".join(shim["name"] for shim in gen["shims"]))'
}
shim_is_current() { current_shims | grep -qx watched; }
handler_in_cri() { node_cri_client status --config | grep -q '"watched"'; }

cat >"$NODE_SHIMS_D/.watched.toml.tmp" <<EOF
[[shim]]
name = "watched"
handler = "watched"
runtime_type = "io.containerd.watched.v2"
binary = "containerd-shim-watched-v2"

[shim.fetch]
url = "$url"
sha256 = "$digest"
EOF
mv "$NODE_SHIMS_D/.watched.toml.tmp" "$NODE_SHIMS_D/watched.toml" # rename into place
start=$SECONDS
check "the new drop-in is installed as the current generation within 20 s" \
    node_wait_for 20 shim_is_current
echo "converged in about $((SECONDS - start)) s"
check "CRI Status lists the handler 'watched'" node_wait_for 10 handler_in_cri
check "containerd is active after the daemon's restart" node_wait_active 20
status_line=$(daemon_prop StatusText)
check "STATUS= names the shim (got: $status_line)" grep -q 'watched' <<<"$status_line"

# --- Soak: the watchdog (5 s) must never fire over 30 s, idle after converging.
restarts=$(daemon_prop NRestarts)
pid=$(daemon_prop MainPID)
soak_end=$((SECONDS + 30))
while ((SECONDS < soak_end)); do
    if [[ $(daemon_prop ActiveState) != active || $(daemon_prop MainPID) != "$pid" ]]; then
        break
    fi
    sleep 1 # sampling the unit's state once a second through the soak, not waiting on it
done
check "still active with the same pid after the 30 s soak" \
    test "$(daemon_prop ActiveState)/$(daemon_prop MainPID)" = "active/$pid"
check "no restart during the soak (NRestarts $restarts -> $(daemon_prop NRestarts))" \
    test "$(daemon_prop NRestarts)" = "$restarts"
check "Result is success, not watchdog (got $(daemon_prop Result))" \
    test "$(daemon_prop Result)" = success

# --- SIGTERM (systemctl stop) ends it cleanly.
systemctl --user stop "$daemon_unit"
check "stopped: inactive (got $(daemon_prop ActiveState))" test "$(daemon_prop ActiveState)" = inactive
check "stopped cleanly: Result=success (got $(daemon_prop Result))" \
    test "$(daemon_prop Result)" = success
check "exit status 0 (got $(daemon_prop ExecMainStatus))" test "$(daemon_prop ExecMainStatus)" = 0
check "containerd is still running with the shim" node_wait_active 5
check "CRI Status still lists 'watched'" handler_in_cri
