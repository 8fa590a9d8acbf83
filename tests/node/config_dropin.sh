#!/usr/bin/env bash
# containerd 2.x deep-merges imported plugin tables (PR #9982), so there shimkeeper writes a
# drop-in when the root config imports a folder, and edits the root config in place when it does
# not. What an operator checks, on a real containerd 2.x:
#   1. root config importing conf.d/*.toml (2.x's own default): apply writes conf.d/shimkeeper.toml
#      with the root's config version, the root config stays byte-identical, CRI (its config and
#      its runtime_handlers list) has the handler, a pod sandbox runs under the installed shim;
#      removing the shim deletes the drop-in and the root config is still byte-identical.
#   2. root config without imports: the same shim lands in a managed block of the root config and
#      no drop-in appears.
# containerd-lines: 2.2 2
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
node_up "$T/node"
node_shim_serve
node_pause_image >/dev/null

dropin=$NODE_CONFIG_DIR/conf.d/shimkeeper.toml
link=$NODE_STORE_DIR/bin/$(shim_binary_for demo)
root_version=$(sed -nE 's/^version = ([0-9]+).*/\1/p' "$NODE_CONFIG")
[[ -n $root_version ]] || fail "no version line in $NODE_CONFIG"
grep -qE "^imports = \[[\"']$NODE_CONFIG_DIR/conf\.d/\*\.toml[\"']\]" "$NODE_CONFIG" ||
    fail "containerd $NODE_CONTAINERD_VERSION's default config does not import conf.d/*.toml:" \
        "$(grep '^imports' "$NODE_CONFIG")"

# pod_runs_installed_shim NAME: a CRI sandbox on handler demo runs under the installed binary.
pod_runs_installed_shim() {
    local pod
    pod=$(node_cri_client run-pod "$1" demo "$NODE_CGROUP_PARENT")
    [[ "$(node_pod_shim_exe "$pod")" == "$(readlink "$link")" ]] ||
        fail "$1: the sandbox's shim is not the installed binary $(readlink "$link")"
    node_cri_client stop-pod "$pod" >/dev/null
    node_cri_client remove-pod "$pod" >/dev/null
}

# cri_lists_demo WHAT: CRI's effective config points demo at the link, and 2.x's own
# runtime_handlers list (what the health check also reads) names it.
cri_lists_demo() {
    [[ "$(node_handler_binary demo)" == "$link" ]] ||
        fail "$1: CRI reports handler demo -> '$(node_handler_binary demo)', expected $link"
    node_cri_client runtime-handlers | grep -qx demo ||
        fail "$1: CRI Status runtime_handlers lacks demo:" \
            "$(node_cri_client runtime-handlers | tr '\n' ' ')"
}

# --- 1. The root config imports conf.d: a drop-in, the root untouched.
cp "$NODE_CONFIG" "$T/root-before.toml"
node_shim_declare demo v1
expect_exit 0 ski plan
expect_output_contains "$dropin"
expect_exit 0 ski apply
expect_output_contains "Committed generation 1"
cmp "$T/root-before.toml" "$NODE_CONFIG" || fail "apply changed the root config $NODE_CONFIG"
[[ -f $dropin ]] || fail "no drop-in $dropin after apply: $(ls -A "$NODE_CONFIG_DIR/conf.d")"
grep -qx "version = $root_version" "$dropin" ||
    fail "the drop-in's version is not the root's ($root_version): $(grep '^version' "$dropin")"
grep -q 'shimkeeper:begin shim=demo' "$dropin" || fail "the drop-in holds no demo block"
node_config_has_handler demo || fail "containerd's config dump (imports merged) lacks demo"
cri_lists_demo "drop-in"
pod_runs_installed_shim dropin-pod
expect_exit 0 ski status
expect_output_contains "drop-in"
expect_output_contains "$NODE_CONTAINERD_VERSION"

rm "$NODE_SHIMS_D/10-demo.toml"
expect_exit 0 ski apply
[[ ! -e $dropin ]] || fail "the drop-in shimkeeper created is still there after the last shim went"
cmp "$T/root-before.toml" "$NODE_CONFIG" || fail "removing the shim changed the root config"
node_wait_for 10 node_cri_lacks_handler demo || fail "CRI still lists demo after the removal"

# --- 2. The root config imports nothing: an in-place edit, no drop-in.
sed -i '/^imports = /d' "$NODE_CONFIG"
systemctl --user restart "$NODE_UNIT"
node_wait_active 20
node_shim_declare demo v2
expect_exit 0 ski apply
expect_output_contains "containerd restarted and healthy"
[[ ! -e $dropin ]] || fail "a drop-in was written although the root config imports nothing"
grep -q 'shimkeeper:begin shim=demo' "$NODE_CONFIG" || fail "the root config holds no demo block"
grep -qx "version = $root_version" "$NODE_CONFIG" || fail "the root config's version changed"
cri_lists_demo "in place"
pod_runs_installed_shim inplace-pod
echo "ok: containerd $NODE_CONTAINERD_VERSION: a drop-in where conf.d is imported (root" \
    "byte-identical), an in-place edit where nothing is"
