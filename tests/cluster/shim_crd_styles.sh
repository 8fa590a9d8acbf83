#!/usr/bin/env bash
# Issue 24: the Shim CRD of deploy/ takes the spellings of the shim lifecycle operator proposal
# and of runtime-class-manager beside shimkeeper's own (runtimeclass, runtimeClass.handler,
# containerdRuntimeOptions, platforms[].os, no runtimeType, no fetchStrategy.type: its two samples
# from tests/fixtures/rcm/ apply as shipped but for apiVersion and artifacts), refuses at admission every conflict
# between two spellings and every os but linux, names the field a missing sha256 is missing
# from, describes every field (kubectl explain), and fills the printer columns from the status in
# one spelling for both styles.
# seconds-about: 25
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
kube_require_peers
kube_up "$(mktemp -d /tmp/sk-kube.XXXXXX)"

source "$SHIMKEEPER_SOURCE_DIR/tests/support/shim_admission.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/rcm_samples.sh"

# runtime-class-manager's samples in their shipped field layout (no fetchStrategy.type, the
# field being deprecated there), only apiVersion and the artifacts changed.
for sample in sample_shim_spin.yaml sample_shim_wasmtime.yaml; do
    out=$(rcm_sample "$sample" http://127.0.0.1:9 | kube_admin apply -f - 2>&1) ||
        { echo "FAIL: $sample was refused: $out" >&2; exit 1; }
    echo "ok: $sample applies as shipped: $out"
done
for name in spin-v2 wasmtime-v1; do
    stored=$(kube_admin get shim "$name" -o jsonpath='{.spec.fetchStrategy.platforms[*].arch}')
    [[ $stored == "aarch64 x86_64" ]] || { echo "FAIL: $name stored platforms '$stored'" >&2; exit 1; }
done
kube_admin delete shim spin-v2 wasmtime-v1 >/dev/null
# The wasmtime sample as shipped has no sha256: refused for that alone, not for its missing type.
out=$(rcm_sample sample_shim_wasmtime.yaml http://127.0.0.1:9 | grep -v 'sha256:' |
    kube_admin apply -f - 2>&1) && { echo "FAIL: a sample without sha256 was accepted" >&2; exit 1; }
grep -qF "spec.fetchStrategy.platforms[].sha256 is missing" <<<"$out" &&
    ! grep -qE "fetchStrategy.type|evaluating rule" <<<"$out" ||
    { echo "FAIL: the wasmtime sample without sha256 was refused with: $out" >&2; exit 1; }
echo "ok: the wasmtime sample without sha256 is refused for the sha256 only: $out"

# Every spelling on its own.
accepted proposal "$good_fetch
runtimeclass: {name: proposal-rc, handler: proposal}
rolloutStrategy: {type: rolling, rolling: {maxUpdate: 5}}"
accepted manager "fetchStrategy:
  type: anonymousHttp
  platforms:
    - {os: linux, arch: x86_64, location: $k_url, sha256: $k_sha}
    - {os: linux, arch: aarch64, location: $k_url, sha256: $k_sha}
runtimeClass: {name: manager-rc, handler: manager}
containerdRuntimeOptions: {SystemdCgroup: 'true', Threads: '4', Mode: fast}
rolloutStrategy: {type: recreate}"
accepted no-runtime-type "$good_fetch"
accepted binary-says-type "binary: containerd-shim-demo-v1
$good_fetch"
accepted handler-both-equal "handler: demo
runtimeClass: {name: demo-rc, handler: demo}
$good_fetch"
accepted lowercase-handler-both-equal "handler: demo2
runtimeclass: {name: demo2-rc, handler: demo2}
$good_fetch"
accepted shimkeeper-style "runtimeType: io.containerd.demo.v2
handler: demo3
options: {SystemdCgroup: true}
runtimeClass: {name: demo3-rc}
$good_fetch"
accepted os-left-out "fetchStrategy:
  type: anonymousHttp
  platforms: [{arch: amd64, location: $k_url, sha256: $k_sha}]"

# Every conflict, and every refused value of a new field.
refused both-runtime-class "spec.runtimeClass and spec.runtimeclass are two spellings of one field" \
    "$good_fetch
runtimeClass: {name: a}
runtimeclass: {name: a}"
refused both-options "spec.options and spec.containerdRuntimeOptions both set the runtime's options" \
    "$good_fetch
options: {SystemdCgroup: true}
containerdRuntimeOptions: {SystemdCgroup: 'true'}"
k_handler_conflict="spec.handler and the runtimeClass's handler name the one containerd handler"
refused handler-differs "$k_handler_conflict" "handler: one
runtimeClass: {name: rc, handler: two}
$good_fetch"
refused lowercase-handler-differs "$k_handler_conflict" "handler: one
runtimeclass: {name: rc, handler: two}
$good_fetch"
refused bad-class-handler "runtimeClass.handler must be 1 to 63 characters" \
    "runtimeClass: {name: rc, handler: 'Bad Handler'}
$good_fetch"
refused bad-lowercase-class-name "runtimeClass.name must be a DNS subdomain" \
    "runtimeclass: {name: 'Not_A_Name'}
$good_fetch"
refused os-windows "os must be linux: shimkeeper installs shims on Linux nodes only" \
    "fetchStrategy:
  type: anonymousHttp
  platforms: [{os: windows, arch: amd64, location: $k_url, sha256: $k_sha}]"
refused options-not-strings "spec.containerdRuntimeOptions.SystemdCgroup: Invalid value: \"boolean\"" \
    "$good_fetch
containerdRuntimeOptions: {SystemdCgroup: true}"
refused binary-says-nothing "spec.binary must be named containerd-shim-<name>-v<N> when spec.runtimeType is left out" \
    "binary: demo-shim
$good_fetch"
refused missing-sha "spec.fetchStrategy.anonHttp.sha256 is missing: every source needs a sha256 unless spec.allowUnverified is true, because the shim runs as root" \
    "fetchStrategy:
  type: anonymousHttp
  anonHttp: {location: $k_url}"
refused missing-platform-sha "spec.fetchStrategy.platforms[].sha256 is missing: every source needs a sha256 unless spec.allowUnverified is true" \
    "fetchStrategy:
  type: anonymousHttp
  platforms:
    - {os: linux, arch: x86_64, location: $k_url, sha256: $k_sha}
    - {os: linux, arch: aarch64, location: $k_url}"
refused unpinned-oci "spec.fetchStrategy.oci.reference has no @sha256: digest" "fetchStrategy:
  type: oci
  oci: {reference: 'registry.example.org/shims/demo:1.0'}"
refused unpinned-platform-oci "spec.fetchStrategy.platforms[].reference has no @sha256: digest" \
    "fetchStrategy:
  type: oci
  platforms:
    - {os: linux, arch: amd64, reference: 'registry.example.org/shims/demo:1.0@sha256:$k_sha'}
    - {os: linux, arch: arm64, reference: 'registry.example.org/shims/demo:1.0'}"
accepted unverified-manager "allowUnverified: true
fetchStrategy:
  type: anonymousHttp
  platforms: [{os: linux, arch: x86_64, location: $k_url}]"

# Descriptions: the Shim itself and every property in it has one, in the schema the API server
# serves, and kubectl explain shows them for the Shim, fetchStrategy and everything in it.
missing=$(kube_admin get crd shims.containerd.x-k8s.io -o json | python3 -S -c '
import json, sys
crd = json.load(sys.stdin)
schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
def walk(node, path):
    if "description" not in node:
        print(path)
    for key, child in node.get("properties", {}).items():
        # The API server refuses a description on metadata; explain takes it from ObjectMeta.
        if path != "shim" or key != "metadata":
            walk(child, path + "." + key)
    if "items" in node:
        walk(node["items"], path + "[]")
walk(schema, "shim")
')
[[ -z $missing ]] || { echo "FAIL: fields without a description: $missing" >&2; exit 1; }
out=$(kube_admin explain shim)
grep -q "A containerd shim to install on the nodes a selector picks" <<<"$out" ||
    { echo "FAIL: kubectl explain shim shows no description: $out" >&2; exit 1; }
explained=0
for field in fetchStrategy fetchStrategy.type fetchStrategy.anonHttp fetchStrategy.anonHttp.location \
    fetchStrategy.anonHttp.sha256 fetchStrategy.oci fetchStrategy.oci.reference fetchStrategy.oci.path \
    fetchStrategy.platforms fetchStrategy.platforms.os fetchStrategy.platforms.arch \
    fetchStrategy.platforms.location fetchStrategy.platforms.sha256 fetchStrategy.platforms.reference \
    fetchStrategy.platforms.path runtimeclass runtimeclass.handler runtimeClass.handler \
    containerdRuntimeOptions runtimeType rolloutStrategy rolloutStrategy.rolling; do
    out=$(kube_admin explain "shim.spec.$field")
    if grep -q "no description" <<<"$out" || ! grep -q "DESCRIPTION:" <<<"$out"; then
        echo "FAIL: kubectl explain shim.spec.$field: $out" >&2
        exit 1
    fi
    explained=$((explained + 1))
done
recursive=$(kube_admin explain shim.spec.fetchStrategy --recursive)
grep -q "os" <<<"$recursive" || { echo "FAIL: explain --recursive lacks os: $recursive" >&2; exit 1; }
echo "ok: the Shim and every field in it have a description; kubectl explain shows the Shim's and $explained fields"

# The printer columns read the status, which the coordinator writes in one spelling: both styles
# show their RuntimeClass (and with -o wide the handler and runtime type).
for name in proposal manager; do
    kube_admin patch shim "$name" --subresource status --type merge -p "{\"status\": {
      \"runtimeClass\": \"$name-rc\", \"handler\": \"$name\",
      \"runtimeTypeFrom\": \"each node's artifact\",
      \"nodes\": {\"selected\": 1, \"installed\": 1, \"failed\": 0, \"updating\": 0}}}" >/dev/null
done
table=$(kube_admin get shims -o wide)
echo "$table"
read -r -a columns <<<"$(head -n 1 <<<"$table")"
expected="NAME RUNTIMECLASS SELECTED INSTALLED FAILED READY HALTED AGE HANDLER RUNTIMETYPE"
[[ ${columns[*]} == "$expected" ]] || {
    echo "FAIL: wide columns are \"${columns[*]}\", expected \"$expected\"" >&2
    exit 1
}
for name in proposal manager; do
    read -r -a row <<<"$(grep "^$name " <<<"$table")"
    [[ ${row[*]:0:5} == "$name $name-rc 1 1 0" ]] || {
        echo "FAIL: the $name row reads \"${row[*]}\"" >&2
        exit 1
    }
done
echo "ok: kubectl get shims shows the RuntimeClass of both styles"
