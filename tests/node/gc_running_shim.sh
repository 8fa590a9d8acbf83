#!/usr/bin/env bash
# Garbage collection never removes an artifact whose binary a running shim executes. containerd runs
# a shim binary again to delete its container long after an upgrade, so with `keep = 1` the old
# artifact must outlive its generation while a sandbox still runs through it, and go at the next
# collection once that sandbox is gone.
# containerd-lines: 1.6 2
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
node_up "$T/node"
echo "keep = 1" >>"$NODE_AGENT_CONFIG" # the harness's agent config ends in [store]
node_shim_serve
node_shim_declare demo v1
expect_exit 0 ski apply
expect_output_contains "Committed generation 1"

binary=$(shim_binary_for demo)
v1=$NODE_STORE_DIR/store/sha256/$(node_shim_digest demo v1)/$binary
node_pause_image >/dev/null
pod=$(node_cri_client run-pod runs-v1 demo "$NODE_CGROUP_PARENT")
[[ "$(node_pod_shim_exe "$pod")" == "$v1" ]] || fail "the sandbox does not run under $v1"

node_shim_declare demo v2
expect_exit 0 ski apply
expect_output_contains "Committed generation 2"
expect_exit 0 ski -o json status
python3 -S - "$OUT" <<'PY' || fail "keep = 1 should leave only generation 2: $(cat "$OUT")"
import json, sys
assert [g["number"] for g in json.load(open(sys.argv[1]))["generations"]] == [2]
PY
[[ -x $v1 ]] || fail "garbage collection removed $v1 while a sandbox's shim runs it"
[[ "$(node_pod_shim_exe "$pod")" == "$v1" ]] || fail "the sandbox no longer runs under $v1"

# The sandbox goes, and with it the last process running v1.
node_cri_client stop-pod "$pod" >/dev/null
node_cri_client remove-pod "$pod" >/dev/null
runs_v1() {
    local exe
    for exe in /proc/[0-9]*/exe; do
        [[ "$(readlink "$exe" 2>/dev/null)" == "$v1"* ]] && return 0
    done
    return 1
}
v1_unused() { ! runs_v1; }
node_wait_for 20 v1_unused || fail "a process still runs $v1 after its sandbox was removed"

node_shim_declare demo v3
expect_exit 0 ski apply
expect_output_contains "Committed generation 3"
[[ ! -e $v1 ]] || fail "$v1 is still in the store although nothing runs it any more"
[[ ! -e $NODE_STORE_DIR/state/fingerprints/$(node_shim_digest demo v1) ]] ||
    fail "the tamper fingerprint of the collected v1 artifact was left behind"
echo "ok: the old artifact stayed while its sandbox ran, and went once it was gone"
