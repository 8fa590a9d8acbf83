#!/usr/bin/env bash
# plan and status as an operator reads them: before and after a fetch, in text and JSON.
source "$SHIMKEEPER_SOURCE_DIR/tests/support/common.sh"
sk_init

mkdir -p "$T/artifacts"
make_shim_archive "$(shim_binary_for demo)" "$T/artifacts/demo.tar.gz"
sha="$(sha256_of "$T/artifacts/demo.tar.gz")"
sk_start_server "$T/artifacts"
write_shim_toml "$ROOT/etc/shimkeeper/shims.d/10-demo.toml" demo demo "$SERVER_URL/demo.tar.gz" "$sha"

# Nothing installed: plan says install and download needed, and changes nothing.
before="$(tree_digest "$ROOT")"
expect_exit 0 sk plan
expect_output_contains "install demo (handler demo)"
expect_output_contains "[download needed]"
expect_output_contains "Plan: 1 to install, 0 to upgrade, 0 to remove, 0 unchanged."
expect_output_contains "config version 2, edits in place /etc/containerd/config.toml"
[[ "$(tree_digest "$ROOT")" == "$before" ]] || fail "plan changed the node root"
[[ "$(sk_requests)" == 0 ]] || fail "plan made HTTP requests"

expect_exit 0 sk plan -o json
python3 -S - "$OUT" "$sha" <<'PY'
import json, sys
plan = json.load(open(sys.argv[1]))
assert plan["converged"] is False, plan
(action,) = plan["actions"]
assert action["action"] == "install" and action["name"] == "demo", action
assert action["to_digest"] == sys.argv[2] and action["staged"] is False, action
PY

# After a fetch the artifact is in the store: plan says so, status lists it as staged.
expect_exit 0 sk fetch
expect_exit 0 sk plan
expect_output_contains "[in store]"
expect_exit 0 sk status
expect_output_contains "Current generation: none"
expect_output_contains "sha256:${sha:0:12}"
expect_output_contains "staged, not installed"
expect_exit 0 sk status -o json
python3 -S - "$OUT" "$sha" <<'PY'
import json, sys
status = json.load(open(sys.argv[1]))
assert [a["digest"] for a in status["artifacts"]] == [sys.argv[2]], status
assert status["current_generation"] is None, status
assert status["desired"][0]["name"] == "demo", status
PY

# No daemon here: status says so in its Daemon part and in JSON's "daemon", naming the file.
expect_exit 0 sk status
expect_output_contains "Daemon: no status file (the daemon is not running here, or it was started with another --status-file) ($ROOT/run/shimkeeper/status.json)"
expect_exit 0 sk status -o json
python3 -S - "$OUT" "$ROOT/run/shimkeeper/status.json" <<'PY'
import json, sys
daemon = json.load(open(sys.argv[1]))["daemon"]
assert daemon == {"file": sys.argv[2], "error": "no status file (the daemon is not running "
                  "here, or it was started with another --status-file)"}, daemon
PY

# A daemon's status file (another --status-file, as `run` writes it): its state, what it waits
# for and what removal it holds back, in text; the file's content under "daemon" in JSON.
mkdir -p "$ROOT/var/run-elsewhere"
cat >"$ROOT/var/run-elsewhere/status.json" <<'JSON'
{"daemon": {"state": "converged", "status": "converged: 1 shim (demo), generation 1",
            "last_success": "2026-11-30T04:00:00Z"},
 "result": {"waiting": {"slow": "waits for a rollout slot"},
            "blocked": {"old": "waits for 1 pod sandbox"}}}
JSON
expect_exit 0 sk status --status-file /var/run-elsewhere/status.json
expect_output_contains "Daemon: converged, last converged 2026-11-30T04:00:00Z ($ROOT/var/run-elsewhere/status.json)"
expect_output_contains "  converged: 1 shim (demo), generation 1"
expect_output_contains "  waiting: slow: waits for a rollout slot"
expect_output_contains "  removal held back: old: waits for 1 pod sandbox"
expect_exit 0 sk status --status-file /var/run-elsewhere/status.json -o json
python3 -S - "$OUT" "$ROOT/var/run-elsewhere/status.json" <<'PY'
import json, sys
daemon = json.load(open(sys.argv[1]))["daemon"]
assert daemon["file"] == sys.argv[2], daemon
assert daemon["daemon"]["state"] == "converged", daemon
assert daemon["result"]["waiting"] == {"slow": "waits for a rollout slot"}, daemon
assert daemon["result"]["blocked"] == {"old": "waits for 1 pod sandbox"}, daemon
PY
