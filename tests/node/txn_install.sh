#!/usr/bin/env bash
# Scenario 1: apply installs a shim served over HTTP. CRI lists the handler pointing at the
# installed binary (by runtime_type or runtime_path, as the containerd line needs); ctr runs a
# busybox container through it; a CRI pod sandbox on the handler (as the kubelet makes one) runs
# under the installed shim binary.
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
node_up "$T/node"
node_shim_serve
node_shim_declare demo v1

expect_exit 0 ski apply
expect_output_contains "Committed generation 1"
expect_output_contains "containerd restarted and healthy"

link="$NODE_STORE_DIR/bin/$(shim_binary_for demo)"
digest=$(node_shim_digest demo v1)
[[ "$(readlink "$link")" == "$NODE_STORE_DIR/store/sha256/$digest/$(shim_binary_for demo)" ]] ||
    fail "bin link points at $(readlink "$link"), not the v1 artifact"
[[ "$(node_handler_binary demo)" == "$link" ]] ||
    fail "CRI reports handler demo -> '$(node_handler_binary demo)', expected $link"
[[ -n "$(node_handler_binary runc)" || "$(node_cri_client status)" == *$'handler\trunc'* ]] ||
    fail "the default runc handler is gone"

# How the runtime names its shim follows the line: containerd 1.6 ignores runtime_path (#8207), so
# there runtime_type is the absolute path; 1.7 and 2.x get runtime_type io.containerd.demo.v2 plus
# runtime_path. Both what is written and what CRI reports are checked.
handler=$(node_cri_client status | awk -F'\t' '$1 == "handler" && $2 == "demo" { print $3 "|" $4 }')
q="[\"']"
case $NODE_CONTAINERD_LINE in
1.6)
    [[ $handler == "$link|" ]] || fail "CRI reports demo as runtime_type|runtime_path '$handler'"
    grep -rqE "^ *runtime_type = $q$link$q" "$NODE_CONFIG_DIR" ||
        fail "no runtime_type = \"$link\" written under $NODE_CONFIG_DIR"
    ;;
*)
    [[ $handler == "io.containerd.demo.v2|$link" ]] ||
        fail "CRI reports demo as runtime_type|runtime_path '$handler'," \
            "expected io.containerd.demo.v2|$link"
    grep -rqE "^ *runtime_type = ${q}io\.containerd\.demo\.v2$q" "$NODE_CONFIG_DIR" ||
        fail "no runtime_type = \"io.containerd.demo.v2\" written under $NODE_CONFIG_DIR"
    grep -rqE "^ *runtime_path = $q$link$q" "$NODE_CONFIG_DIR" ||
        fail "no runtime_path = \"$link\" written under $NODE_CONFIG_DIR"
    ;;
esac
if [[ $NODE_CONTAINERD_LINE == 2* ]]; then
    # 2.x's CRI Status lists handlers in runtime_handlers too; shimkeeper's health check reads it.
    node_cri_client runtime-handlers | grep -qx demo ||
        fail "CRI Status runtime_handlers lacks demo:" \
            "$(node_cri_client runtime-handlers | tr '\n' ' ')"
fi

# ctr resolves --runtime itself: give it the installed binary's absolute path.
rootfs="$T/rootfs"
node_busybox_rootfs "$rootfs"
# The container leaves its proof in a file of the rootfs: ctr's copy of a fast process's stdout
# has come back empty under load (a ctr/containerd I/O race, not the shim's doing).
ctr -a "$NODE_SOCKET" run --rm --runtime "$link" --cgroup "$NODE_CGROUP_PARENT/ctr-demo" \
    --rootfs "$rootfs" ctr-demo /bin/sh -c 'echo "hello through demo" >/tmp/ran' >/dev/null
out=$(cat "$rootfs/tmp/ran" 2>/dev/null || true)
[[ "$out" == "hello through demo" ]] || fail "ctr run through the installed shim left: '$out'"

# The kubelet's path: RunPodSandbox with runtime_handler=demo.
node_pause_image >/dev/null
pod=$(node_cri_client run-pod demo-pod demo "$NODE_CGROUP_PARENT")
[[ -n "$pod" ]] || fail "RunPodSandbox on handler demo returned no id"
shim_exe=$(node_pod_shim_exe "$pod") || fail "no pause process of sandbox $pod appeared"
[[ "$shim_exe" == "$NODE_STORE_DIR/store/sha256/$digest/$(shim_binary_for demo)" ]] ||
    fail "the sandbox's shim process is $shim_exe, not the installed binary"
node_cri_client stop-pod "$pod" >/dev/null
node_cri_client remove-pod "$pod" >/dev/null

expect_exit 0 ski status
expect_output_contains "Current generation: 1"
echo "ok: installed, registered, ran a container and a pod sandbox through the new handler"
