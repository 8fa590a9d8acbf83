#!/usr/bin/env bash
# The real-node harness itself: a private systemd user manager runs Debian's containerd as a
# Type=notify unit; ctr runs a busybox container through the runc shim; a restart through
# systemd brings containerd back with a new invocation and it keeps working.
set -euo pipefail
# What this proves is shimkeeper's (journal, daemon, restart guard), not a config format: the
# oldest and the newest containerd line are enough (keeps scripts/test inside its budget).
# containerd-lines: 1.6 2
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
# The container leaves its words in a file of the rootfs: ctr's copy of a fast process's stdout
# has come back empty under load (a ctr/containerd I/O race; txn_install.sh saw it first).
run_busybox() {
    local id=$1
    ctr -a "$NODE_SOCKET" run --rm --runtime "$NODE_SHIM_RUNC" \
        --cgroup "$NODE_CGROUP_PARENT/$id" --rootfs "$rootfs" "$id" \
        /bin/sh -c "echo 'hello from $id' >/tmp/said-$id" >/dev/null
    cat "$rootfs/tmp/said-$id" 2>/dev/null || true
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
images=$(ctr -a "$NODE_SOCKET" -n k8s.io images ls -q)
check "the pause image $image is imported into k8s.io" grep -qx "$image" <<<"$images"
# 1.x: sandbox_image = "..."; 2.x: pinned_images' sandbox = '...'.
check "containerd's sandbox image names it" \
    grep -qE "^ *(sandbox_image|sandbox) = [\"']$image[\"']" "$NODE_CONFIG"
check "the agent config uses the user bus" grep -qx 'bus = "user"' "$NODE_AGENT_CONFIG"

# A pod the way the kubelet makes one: CRI RunPodSandbox on the default runc handler, host
# network, our cgroup parent; its pause process is a child of the runc shim.
pod=$(node_cri_client run-pod harness-pod runc "$NODE_CGROUP_PARENT")
check "RunPodSandbox returned a sandbox id ($pod)" test -n "$pod"
shim_exe=$(node_pod_shim_exe "$pod") || {
    echo "FAIL: no pause process of sandbox $pod appeared within 10 s" >&2
    exit 1
}
pause_pid=$(node_pod_pause_pid "$pod")
check "the sandbox's pause process runs under containerd-shim-runc-v2 (got $shim_exe)" \
    test "$shim_exe" = "$NODE_SHIM_RUNC"
pods=$(node_cri_client list-pods)
check "CRI lists the sandbox as ready on handler runc" \
    grep -qP "^$pod\tharness-pod\tready\trunc\$" <<<"$pods"
node_cri_client stop-pod "$pod" >/dev/null
node_cri_client remove-pod "$pod" >/dev/null
pods=$(node_cri_client list-pods)
check "the sandbox is no longer listed after stop and remove" test "${pods/$pod/}" = "$pods"
check "its pause process has exited" node_pid_gone "$pause_pid"

# A drop-in that makes containerd's start fail: the restart job fails, and removing the drop-in
# brings containerd back.
node_unit_dropin sk-break $'[Service]\nExecStartPre=/bin/false'
if systemctl --user restart "$NODE_UNIT" 2>/dev/null; then
    echo "FAIL: containerd restarted although its ExecStartPre fails" >&2
    exit 1
fi
check "a failing drop-in fails the unit (Result=$(node_unit_prop Result))" \
    test "$(node_unit_prop Result)" = exit-code
node_unit_dropin sk-break
systemctl --user reset-failed "$NODE_UNIT"
systemctl --user restart "$NODE_UNIT"
node_wait_active 20
check "without the drop-in containerd is active again" node_unit_is_active
