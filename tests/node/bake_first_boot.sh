#!/usr/bin/env bash
# Bake, then "first boot": `shimkeeper bake` fills an image root (no containerd running in it,
# nothing run inside it, no D-Bus); then the image's files are put where the node has them
# (containerd's config folder and the store, at the very node paths the bake wrote into them),
# containerd starts on the baked config as it would at boot, and the daemon's first run finds the
# node converged: zero requests to the artifact server, zero containerd restarts, the handler
# registered in CRI and pointing at the baked binary. A booted image (tests/distro) still has to
# show the same with the packaged unit under PID 1.
# containerd-lines: 1.6
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
node_up "$T/node"
node_shim_serve

# The image: containerd's config as the node has it, a dpkg database naming this containerd, the
# packaged unit; the agent config and shims.d beside it (given with -c: paths of this process).
image=$T/image
mkdir -p "$image$(dirname "$NODE_CONFIG_DIR")" "$image/var/lib/dpkg" "$image/lib/systemd/system"
cp -a "$NODE_CONFIG_DIR" "$image$NODE_CONFIG_DIR"
cp "$SHIMKEEPER_SOURCE_DIR/units/shimkeeper.service" "$image/lib/systemd/system/"
printf 'Package: containerd\nStatus: install ok installed\nVersion: %s~ds1-1\n\n' \
    "$NODE_CONTAINERD_VERSION" >"$image/var/lib/dpkg/status"
mkdir -p "$T/bake/shims.d"
cp "$NODE_AGENT_CONFIG" "$T/bake/shimkeeper.toml"
NODE_SHIMS_D=$T/bake/shims.d node_shim_declare demo v1

expect_exit 0 "$SHIMKEEPER" -c "$T/bake/shimkeeper.toml" --root "$image" bake
expect_output_contains "Baked generation 1"
[[ $(sk_requests) == 1 ]] || fail "the bake made $(sk_requests) requests"
[[ -L $image/etc/systemd/system/multi-user.target.wants/shimkeeper.service ]] || fail "unit not enabled"
[[ ! -e $NODE_STORE_DIR/state/state.json ]] || fail "the bake wrote to the node instead of the image"

# First boot: the image's files at their node paths, containerd started on them.
systemctl --user stop "$NODE_UNIT"
rm -rf "$NODE_CONFIG_DIR" "$NODE_STORE_DIR"
cp -a "$image$NODE_CONFIG_DIR" "$NODE_CONFIG_DIR"
cp -a "$image$NODE_STORE_DIR" "$NODE_STORE_DIR"
cp "$T/bake/shims.d/"*.toml "$NODE_SHIMS_D/"
systemctl --user start "$NODE_UNIT"
node_wait_active 20 || fail "containerd did not start on the baked config"
node_count_starts
sk_reset_requests
identity=$(node_unit_identity)

status_file=$T/status.json
"$SHIMKEEPER" -c "$NODE_AGENT_CONFIG" run --status-file "$status_file" >"$T/daemon.log" 2>&1 &
daemon=$!
sk_track "$daemon"
first_run_done() {
    python3 -S -c 'import json, sys
s = json.load(open(sys.argv[1]))
r = s.get("result") or {}
sys.exit(0 if r.get("result") == "committed" else 1)' "$status_file" 2>/dev/null
}
node_wait_for 60 first_run_done || fail "the daemon's first run did not finish: $(cat "$T/daemon.log")"
kill -TERM "$daemon"
wait "$daemon" || fail "the daemon did not stop cleanly: $(cat "$T/daemon.log")"

python3 -S - "$status_file" <<'PY' || fail "the first run was not a no-op: $(cat "$status_file")"
import json, sys
r = json.load(open(sys.argv[1]))["result"]
assert r["changed"] is False, r
assert r["generation"] == 1, r
assert r["restarts"] == 0, r
PY
[[ $(sk_requests) == 0 ]] || fail "the first boot made $(sk_requests) requests to the artifact server"
[[ $(node_starts) == 0 && $(node_unit_identity) == "$identity" ]] ||
    fail "containerd was restarted at first boot ($(node_starts) starts)"
link="$NODE_STORE_DIR/bin/$(shim_binary_for demo)"
[[ "$(node_handler_binary demo)" == "$link" ]] ||
    fail "CRI reports handler demo -> '$(node_handler_binary demo)', expected $link"
echo "ok: a baked image converges at first boot with no download and no containerd restart"
