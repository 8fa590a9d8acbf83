#!/usr/bin/env bash
# Shims written the way the shim lifecycle operator proposal and runtime-class-manager write them
# (their field names, only apiVersion changed) install on a real sandboxed node (systemd --user +
# containerd, tests/support/cluster_node.sh) with its agent in cluster mode, the coordinator beside
# it:
#   - proposal style: `runtimeclass` (lowercase) carrying the handler, `annonymousHttp`, no
#     runtimeType: the node derives io.containerd.comet.v1 from the artifact's
#     containerd-shim-comet-v1 (not the handler's v2 guess), installs it, labels its Node; CRI
#     lists the handler; `plan`/`status` and the Shim's status say what was derived and why, the
#     node's annotation carries the type, and the Shim's status.runtimeType (-o wide) shows it;
#   - runtime-class-manager style: `runtimeClass.handler`, `platforms[]` with `os: linux` and
#     x86_64/aarch64 names, `containerdRuntimeOptions` strings written into containerd's TOML as
#     a boolean and a number, rolloutStrategy recreate: installed, labelled;
#   - runtime-class-manager's own samples (tests/fixtures/rcm/) in their shipped field layout,
#     no fetchStrategy.type: applied with only apiVersion and the artifacts changed, both
#     installed, labelled, listed by CRI, with their RuntimeClasses;
#   - an artifact whose file names do not say the runtime type: the node reports `failed` with a
#     reason naming the archive's entries, no label, and the others stay installed.
# seconds-about: 40
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_shim.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/coordinator_process.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/rcm_samples.sh"
kube_require_peers
node_reexec_in_namespace "$@"
pass() { echo "ok: $*"; }
sk_init
kube_up "$T/kube"
node_shim_serve

# artifact NAME FILE...: $T/artifacts/NAME.tar.gz holding the line's runc shim under each FILE
# (a path inside the archive), plus a README that is no shim.
artifact() {
    local name=$1 staging file
    shift
    staging=$(mktemp -d "$T/artifact.XXXXXX")
    for file in "$@"; do
        install -D -m 0755 "$NODE_SHIM_RUNC" "$staging/$file"
    done
    echo "$name, for the shim_api_styles scenario" >"$staging/README"
    sk_pack_tar_gz "$staging" "$T/artifacts/$name.tar.gz" .
    rm -rf "$staging"
}
artifact comet containerd-shim-comet-v1
artifact lunar bin/containerd-shim-lunar-v2
artifact mute bin/mute-shim
# The files runtime-class-manager's samples name, each holding its shim at the archive's root
# as the real releases do; both architectures, so the node's own entry exists on either.
for file in $(rcm_sample_files sample_shim_spin.yaml); do
    artifact "${file%.tar.gz}" containerd-shim-spin-v2
done
for file in $(rcm_sample_files sample_shim_wasmtime.yaml); do
    artifact "${file%.tar.gz}" containerd-shim-wasmtime-v1
done

kube_create_node node-a wasm=true spin=true wasmtime=true
coordinator_start coord-1
bash "$SHIMKEEPER_SOURCE_DIR/tests/support/cluster_node.sh" "$T/a" node-a \
    "$(kube_node_token_kubeconfig node-a)" >"$T/a.out" 2>&1 &
sk_track $!
on_a() {
    (
        # shellcheck disable=SC1090
        source "$T/a/node.env"
        "$@"
    )
}
agent_log() { tail -n "${1:-30}" "$T/a/agent.log" 2>/dev/null; }
kube_wait_for 60 test -e "$T/a/ready" || fail "node-a did not come up: $(cat "$T/a.out")"

# The node's label for SHIM: present with any non-empty value (its value is the label's owner's
# business), or "" when absent.
label() {
    kube_admin get node node-a -o jsonpath="{.metadata.labels.shim\.containerd\.x-k8s\.io/$1}"
}
labelled() { [[ -n "$(label "$1")" ]]; }
# state SHIM: the annotation's state@generation ("" when none); reason SHIM: its reason.
annotation_field() {
    kube_admin get node node-a -o json | python3 -S -c 'import json, sys
a = json.load(sys.stdin)["metadata"].get("annotations", {}).get("shim.containerd.x-k8s.io/" + sys.argv[1])
a = {} if a is None else json.loads(a)
print("%s@%s" % (a["state"], a["generation"]) if sys.argv[2] == "state" and a else a.get(sys.argv[2], ""))' "$1" "$2"
}
state_is() { [[ "$(annotation_field "$1" state)" == "$2" ]]; }
wait_state() {
    kube_wait_for "${3:-120}" state_is "$1" "$2" ||
        fail "node-a says '$(annotation_field "$1" state)' about $1, not $2; its agent: $(agent_log)"
}

echo "--- proposal style: runtimeclass, its handler, no runtimeType"
cat <<YAML | kube_admin apply -f - >/dev/null
apiVersion: containerd.x-k8s.io/v1alpha1
kind: Shim
metadata:
  name: comet-v1
spec:
  nodeSelector:
    wasm: "true"
  fetchStrategy:
    type: annonymousHttp
    anonHttp:
      location: $SERVER_URL/comet.tar.gz
      sha256: $(sha256_of "$T/artifacts/comet.tar.gz")
  runtimeclass:
    name: comet
    handler: comet
  rolloutStrategy:
    type: rolling
    rolling:
      maxUpdate: 5
YAML
wait_state comet-v1 installed@1
kube_wait_for 60 labelled comet-v1 || fail "node-a never got the comet-v1 label: $(agent_log)"
on_a node_cri_has_handler comet || fail "node-a is labelled but CRI does not list handler comet"
# Every TOML file of containerd's config folder (the root config and any drop-in).
config_text() { on_a sh -c 'find "$(dirname "$NODE_CONFIG")" -name "*.toml" -exec cat {} +'; }
# The derived type, or on a containerd older than 1.7 the derived binary's absolute path.
grep -qE '^\s*runtime_type = "(io\.containerd\.comet\.v1|/[^"]*/containerd-shim-comet-v1)"$' <<<"$(config_text)" ||
    fail "containerd's config does not run comet as io.containerd.comet.v1: $(grep -n -A3 comet <<<"$(config_text)")"
expect_exit 0 on_a ski status
expect_output_contains "runtime type io.containerd.comet.v1, derived from the artifact's containerd-shim-comet-v1"
expect_exit 0 on_a ski plan
expect_output_contains "runtime type io.containerd.comet.v1, derived from the artifact's containerd-shim-comet-v1"
expect_output_contains "Nothing to do"
rc_of() { kube_admin get runtimeclass "$1" -o jsonpath='{.handler}' 2>/dev/null; }
kube_wait_for 60 test "$(rc_of comet)" = comet || fail "RuntimeClass comet: handler '$(rc_of comet)'"
shim_status() { kube_admin get shim "$1" -o jsonpath="{.status.$2}"; }
status_says() { [[ "$(shim_status "$1" "$2")" == "$3" ]]; }
kube_wait_for 60 status_says comet-v1 runtimeClass comet ||
    fail "Shim comet-v1's status.runtimeClass: $(shim_status comet-v1 runtimeClass)"
[[ "$(shim_status comet-v1 runtimeTypeFrom)" == "each node's artifact"* ]] ||
    fail "Shim comet-v1's status.runtimeTypeFrom: $(shim_status comet-v1 runtimeTypeFrom)"
# What the node derived is on its annotation, and the coordinator writes it into the Shim's
# status, which `kubectl get shims -o wide` shows in its RuntimeType column.
[[ "$(annotation_field comet-v1 runtimeType)" == io.containerd.comet.v1 ]] ||
    fail "node-a's annotation for comet-v1 says runtimeType '$(annotation_field comet-v1 runtimeType)'"
kube_wait_for 60 status_says comet-v1 runtimeType io.containerd.comet.v1 ||
    fail "Shim comet-v1's status.runtimeType: '$(shim_status comet-v1 runtimeType)' ($(shim_status comet-v1 runtimeTypeFrom))"
[[ "$(shim_status comet-v1 runtimeTypeFrom)" == *"every node installed at this generation derived io.containerd.comet.v1" ]] ||
    fail "Shim comet-v1's status.runtimeTypeFrom: $(shim_status comet-v1 runtimeTypeFrom)"
wide=$(kube_admin get shim comet-v1 -o wide)
column=$(awk 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "RUNTIMETYPE") c = i } NR == 2 { print $c }' <<<"$wide")
[[ $column == io.containerd.comet.v1 ]] || fail "kubectl get shims -o wide: RuntimeType '$column' in: $wide"
pass "proposal style: io.containerd.comet.v1 derived from the artifact, installed, labelled, RuntimeClass comet, status.runtimeType io.containerd.comet.v1"

echo "--- runtime-class-manager style: runtimeClass.handler, platforms with os, string options"
lunar_sha=$(sha256_of "$T/artifacts/lunar.tar.gz")
cat <<YAML | kube_admin apply -f - >/dev/null
apiVersion: containerd.x-k8s.io/v1alpha1
kind: Shim
metadata:
  name: lunar-v2
  labels:
    app.kubernetes.io/name: lunar-v2
spec:
  nodeSelector:
    wasm: "true"
  fetchStrategy:
    type: anonymousHttp
    platforms:
      - os: linux
        arch: x86_64
        location: $SERVER_URL/lunar.tar.gz
        sha256: $lunar_sha
      - os: linux
        arch: aarch64
        location: $SERVER_URL/lunar.tar.gz
        sha256: $lunar_sha
  runtimeClass:
    name: lunar
    handler: lunar
  rolloutStrategy:
    type: recreate
  containerdRuntimeOptions:
    LunarDebug: "true"
    LunarThreads: "4"
YAML
wait_state lunar-v2 installed@1
kube_wait_for 60 labelled lunar-v2 || fail "node-a never got the lunar-v2 label: $(agent_log)"
on_a node_cri_has_handler lunar || fail "node-a is labelled but CRI does not list handler lunar"
grep -qE '^\s*LunarDebug = true$' <<<"$(config_text)" ||
    fail "LunarDebug is not the boolean true in containerd's config: $(grep -n Lunar <<<"$(config_text)")"
grep -qE '^\s*LunarThreads = 4$' <<<"$(config_text)" ||
    fail "LunarThreads is not the number 4 in containerd's config: $(grep -n Lunar <<<"$(config_text)")"
kube_wait_for 60 test "$(rc_of lunar)" = lunar || fail "RuntimeClass lunar: handler '$(rc_of lunar)'"
kube_wait_for 60 status_says lunar-v2 handler lunar || fail "Shim lunar-v2's status.handler"
on_a node_cri_has_handler comet || fail "installing lunar lost comet"
pass "runtime-class-manager style: installed, labelled, options typed (LunarDebug = true, LunarThreads = 4)"

echo "--- runtime-class-manager's samples as shipped: platforms and no fetchStrategy.type"
for sample in sample_shim_spin.yaml sample_shim_wasmtime.yaml; do
    out=$(rcm_sample "$sample" "$SERVER_URL" "$T/artifacts" | kube_admin apply -f - 2>&1) ||
        fail "$sample was refused: $out"
done
wait_state spin-v2 installed@1
wait_state wasmtime-v1 installed@1
for pair in spin-v2:spin-v2:wasmtime-spin-v2 wasmtime-v1:wasmtime:wasmtime-v1; do
    IFS=: read -r shim handler class <<<"$pair"
    kube_wait_for 60 labelled "$shim" || fail "node-a never got the $shim label: $(agent_log)"
    on_a node_cri_has_handler "$handler" || fail "node-a is labelled but CRI does not list $handler"
    kube_wait_for 60 test "$(rc_of "$class")" = "$handler" ||
        fail "RuntimeClass $class: handler '$(rc_of "$class")'"
done
# shimkeeper's block for spin-v2 in containerd's config (between its begin and end markers).
spin_block=$(awk '/^# shimkeeper:begin shim=spin-v2 /, /^# shimkeeper:end shim=spin-v2$/' <<<"$(config_text)")
grep -qE '^\s*SystemdCgroup = true$' <<<"$spin_block" ||
    fail "the spin sample's SystemdCgroup is not the boolean true in its block: $spin_block"
on_a node_cri_has_handler comet && on_a node_cri_has_handler lunar ||
    fail "installing the samples took another handler off CRI"
pass "runtime-class-manager's spin and wasmtime samples: installed, labelled, RuntimeClasses wasmtime-spin-v2 and wasmtime-v1"

echo "--- an artifact whose names do not say the runtime type"
cat <<YAML | kube_admin apply -f - >/dev/null
apiVersion: containerd.x-k8s.io/v1alpha1
kind: Shim
metadata:
  name: mute
spec:
  nodeSelector:
    wasm: "true"
  fetchStrategy:
    type: anonymousHttp
    anonHttp:
      location: $SERVER_URL/mute.tar.gz
      sha256: $(sha256_of "$T/artifacts/mute.tar.gz")
  runtimeClass:
    name: mute
    handler: mute
YAML
wait_state mute failed@1
reason=$(annotation_field mute reason)
for part in "no executable in the artifact is named containerd-shim-<name>-v<N>" \
    "bin/mute-shim (executable)" "README" "set spec.runtimeType"; do
    [[ $reason == *"$part"* ]] || fail "the failure reason lacks \"$part\": $reason"
done
[[ -z "$(label mute)" ]] || fail "node-a is labelled for mute although it failed"
on_a node_cri_lacks_handler mute || fail "CRI lists the failed handler mute"
labelled comet-v1 && labelled lunar-v2 && labelled spin-v2 && labelled wasmtime-v1 ||
    fail "a failed Shim took another's label"
on_a node_cri_has_handler comet && on_a node_cri_has_handler lunar ||
    fail "a failed Shim took another handler off CRI"
pass "mute: failed on node-a naming the archive's entries ($reason)"
