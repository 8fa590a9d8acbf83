#!/usr/bin/env bash
# The real-node harness itself: a private systemd user manager runs Debian's containerd as a
# Type=notify unit; ctr runs a busybox container through the runc shim; a restart through
# systemd brings containerd back with a new invocation and it keeps working.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_harness.sh"
node_reexec_in_namespace "$@"

node_up "$(mktemp -d /tmp/sknode.XXXXXX)"

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

check "containerd.service is active" test "$(node_unit_prop ActiveState)" = active
check "ctr version answers on $NODE_SOCKET" node_containerd_answers
check "containerd uses the instance's own root" \
    test -d "$NODE_DIR/var/lib/containerd/io.containerd.metadata.v1.bolt"

rootfs=$NODE_DIR/rootfs
node_busybox_rootfs "$rootfs"
run_busybox() {
    local id=$1
    ctr -a "$NODE_SOCKET" run --rm --runtime /usr/bin/containerd-shim-runc-v2 \
        --cgroup "$NODE_CGROUP_PARENT/$id" --rootfs "$rootfs" "$id" /bin/echo "hello from $id"
}
out=$(run_busybox first)
check "ctr run --rootfs prints the container's output (got: $out)" test "$out" = "hello from first"

before=$(node_unit_prop InvocationID)
restarts_before=$(node_unit_prop NRestarts)
systemctl --user restart "$NODE_UNIT"
node_wait_active 20
after=$(node_unit_prop InvocationID)
check "restart gives a new invocation ($before -> $after)" test "$before" != "$after"
check "NRestarts counts only automatic restarts (still $restarts_before)" \
    test "$(node_unit_prop NRestarts)" = "$restarts_before"
out=$(run_busybox second)
check "containers still run after the restart (got: $out)" test "$out" = "hello from second"

image=$(node_pause_image)
check "the pause image $image is imported into k8s.io" \
    bash -c "ctr -a '$NODE_SOCKET' -n k8s.io images ls -q | grep -qx '$image'"
check "containerd's sandbox_image names it" grep -q "sandbox_image = \"$image\"" "$NODE_CONFIG"
check "the agent config uses the user bus" grep -qx 'bus = "user"' "$NODE_AGENT_CONFIG"
