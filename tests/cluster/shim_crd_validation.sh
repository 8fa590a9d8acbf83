#!/usr/bin/env bash
# Issue 7: the Shim CRD of deploy/ refuses at admission what a node would refuse later, with a
# message `kubectl apply` shows, and creates nothing; it accepts good objects in both spellings
# of anonymousHttp and without fetchStrategy.type (the source says it; a written type must
# agree), and `kubectl get shims` shows the printer columns with status filled in.
# seconds-about: 35
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
kube_require_peers
kube_up "$(mktemp -d /tmp/sk-kube.XXXXXX)"

SHIM_RUNTIME_TYPE=io.containerd.demo.v2 # every Shim here names its runtime type
source "$SHIMKEEPER_SOURCE_DIR/tests/support/shim_admission.sh"

k_handler_msg="handler must be 1 to 63 characters"
refused bad-handler-upper "$k_handler_msg" "handler: Spin
$good_fetch"
refused bad-handler-quote "$k_handler_msg" "handler: 'a\"b'
$good_fetch"
refused bad-handler-newline "$k_handler_msg" "handler: \"x]\\n[y\"
$good_fetch"
refused bad-handler-long "may not be more than 63" "handler: $(printf 'h%.0s' {1..64})
$good_fetch"
# The apiserver's own name rule (a DNS subdomain) already keeps quotes out of names.
refused 'a"b' "a lowercase RFC 1123 subdomain" "$good_fetch"
refused "$(printf 'n%.0s' {1..64})" "metadata.name must be at most 63 characters" "$good_fetch"
refused bad-runtime-type "runtimeType must be io.containerd.<name>.<version>" \
    "runtimeType: io.containerd.spin
$good_fetch"
refused bad-runtime-path "runtimeType must be io.containerd.<name>.<version>" \
    "runtimeType: '/usr/bin/x\"y'
$good_fetch"
refused bad-binary "binary must be a plain file name" "binary: ../containerd-shim-demo-v2
$good_fetch"
refused bad-sha-short "sha256 must be exactly 64 lowercase hexadecimal digits" "fetchStrategy:
  type: anonymousHttp
  anonHttp: {location: $k_url, sha256: abc123}"
refused bad-sha-upper "sha256 must be exactly 64 lowercase hexadecimal digits" "fetchStrategy:
  type: anonymousHttp
  anonHttp: {location: $k_url, sha256: ${k_sha^^}}"
refused missing-sha "every source needs a sha256 unless spec.allowUnverified is true" \
    "fetchStrategy:
  type: anonymousHttp
  anonHttp: {location: $k_url}"
refused missing-platform-sha "every source needs a sha256 unless spec.allowUnverified is true" \
    "fetchStrategy:
  type: anonymousHttp
  platforms:
    - {arch: amd64, location: $k_url, sha256: $k_sha}
    - {arch: arm64, location: $k_url}"
refused both-sources "exactly one of anonHttp" "fetchStrategy:
  type: anonymousHttp
  anonHttp: {location: $k_url, sha256: $k_sha}
  platforms: [{arch: amd64, location: $k_url, sha256: $k_sha}]"
refused no-source "spec.fetchStrategy has no source: give anonHttp" "allowUnverified: true
fetchStrategy: {type: anonymousHttp}"
refused duplicate-arch "Duplicate value" "fetchStrategy:
  type: anonymousHttp
  platforms:
    - {arch: amd64, location: $k_url, sha256: $k_sha}
    - {arch: amd64, location: $k_url, sha256: $k_sha}"
refused bad-location "location must be an https:// or http:// URL" "fetchStrategy:
  type: anonymousHttp
  anonHttp: {location: 'ftp://example.org/shim.tar.gz', sha256: $k_sha}"
refused bad-fetch-type "Unsupported value: \"s3\"" "fetchStrategy:
  type: s3
  anonHttp: {location: $k_url, sha256: $k_sha}"
# type: oci, the same fields as [shim.fetch] oci/path in TOML.
k_ref="registry.example.org:5000/shims/demo:1.0@sha256:$k_sha"
k_ref_msg="reference must be REGISTRY/REPOSITORY"
refused oci-unpinned "spec.fetchStrategy.oci.reference has no @sha256: digest" \
    "fetchStrategy:
  type: oci
  oci: {reference: 'registry.example.org/shims/demo:1.0', path: usr/bin/shim}"
refused oci-no-registry "$k_ref_msg" "fetchStrategy:
  type: oci
  oci: {reference: 'shims/demo@sha256:$k_sha'}"
refused oci-upper-repo "$k_ref_msg" "fetchStrategy:
  type: oci
  oci: {reference: 'registry.example.org/Shims/demo@sha256:$k_sha'}"
refused oci-bad-path "path must name a file inside the image" "fetchStrategy:
  type: oci
  oci: {reference: '$k_ref', path: usr/../etc/shadow}"
refused oci-with-anon "spec.fetchStrategy.type is \"oci\" but spec.fetchStrategy.anonHttp is an anonymousHttp source: they must agree" "fetchStrategy:
  type: oci
  anonHttp: {location: $k_url, sha256: $k_sha}"
refused oci-platform-location "spec.fetchStrategy.platforms entries follow the type" "fetchStrategy:
  type: oci
  platforms: [{arch: amd64, location: $k_url, sha256: $k_sha}]"
refused anon-with-reference "spec.fetchStrategy.platforms entries follow the type" "fetchStrategy:
  type: anonymousHttp
  platforms: [{arch: amd64, reference: '$k_ref'}]"
refused oci-both "exactly one of anonHttp or oci" "fetchStrategy:
  type: oci
  oci: {reference: '$k_ref'}
  platforms: [{arch: amd64, reference: '$k_ref'}]"
# fetchStrategy.type is optional (runtime-class-manager deprecated it): anonHttp and platforms
# mean anonymousHttp, oci means oci; a written type must agree, and no source is still refused.
accepted no-type-anon-http "fetchStrategy:
  anonHttp: {location: $k_url, sha256: $k_sha}"
accepted no-type-platforms "fetchStrategy:
  platforms:
    - {os: linux, arch: x86_64, location: $k_url, sha256: $k_sha}
    - {os: linux, arch: aarch64, location: $k_url, sha256: $k_sha}"
accepted no-type-oci "fetchStrategy:
  oci: {reference: '$k_ref', path: containerd-shim-demo-v2}"
refused no-type-anon-with-oci "spec.fetchStrategy.type is \"anonymousHttp\" but spec.fetchStrategy.oci is an oci source: they must agree (or leave type out: the source says it)" \
    "fetchStrategy:
  type: anonymousHttp
  oci: {reference: '$k_ref'}"
refused proposal-type-with-oci "spec.fetchStrategy.type is \"annonymousHttp\" but spec.fetchStrategy.oci is an oci source" \
    "fetchStrategy:
  type: annonymousHttp
  oci: {reference: '$k_ref'}"
refused no-type-no-source "spec.fetchStrategy has no source: give anonHttp (one URL for every node), oci (one OCI reference for every node) or platforms (one per architecture)" \
    "fetchStrategy: {}"
refused no-type-platform-reference "write type: oci for entries with reference" "fetchStrategy:
  platforms: [{arch: amd64, reference: '$k_ref'}]"
refused no-type-missing-platform-sha "spec.fetchStrategy.platforms[].sha256 is missing" "fetchStrategy:
  platforms:
    - {arch: amd64, location: $k_url, sha256: $k_sha}
    - {arch: arm64, location: $k_url}"
stored_type=$(kube_admin get shim no-type-platforms -o jsonpath='{.spec.fetchStrategy.type}')
[[ -z $stored_type ]] || {
    echo "FAIL: the API server stored type \"$stored_type\" for a Shim that gave none" >&2
    exit 1
}
echo "ok: a Shim without fetchStrategy.type is stored without one"
accepted oci-image "fetchStrategy:
  type: oci
  oci: {reference: '$k_ref', path: /usr/bin/containerd-shim-demo-v2}"
accepted oci-platforms "fetchStrategy:
  type: oci
  platforms:
    - {arch: amd64, reference: '$k_ref', path: usr/bin/containerd-shim-demo-v2}
    - {arch: arm64, reference: 'registry.example.org/shims/demo@sha256:$k_sha', path: shim}"
k_max_update_msg="maxUpdate must be a number of nodes (at least 1) or a percentage from 1% to 100%"
i=0
for bad in '"abc"' '"150%"' '"0%"' '"5"' 0 -2; do
    i=$((i + 1))
    refused "bad-max-update-$i" "$k_max_update_msg" "$good_fetch
rolloutStrategy: {type: rolling, rolling: {maxUpdate: $bad}}"
done
refused recreate-with-rolling "rolling applies only with type: rolling" "$good_fetch
rolloutStrategy: {type: recreate, rolling: {maxUpdate: 2}}"

accepted spin-v2 "nodeSelector: {wasm: \"true\"}
handler: spin
binary: containerd-shim-spin-v2
options: {SystemdCgroup: true}
$good_fetch
runtimeClass: {name: wasmtime-spin-v2}
rolloutStrategy: {type: rolling, rolling: {maxUpdate: \"10%\"}}"
accepted proposal-spelling "fetchStrategy:
  type: annonymousHttp
  platforms:
    - {arch: amd64, location: $k_url, sha256: $k_sha}
    - {arch: arm64, location: 'http://mirror.example.org/arm64.tar.gz', sha256: $k_sha}
rolloutStrategy: {rolling: {maxUpdate: 3}}"
accepted unverified "allowUnverified: true
fetchStrategy:
  type: anonymousHttp
  anonHttp: {location: $k_url}
rolloutStrategy: {type: recreate}"
accepted absolute-runtime-type "runtimeType: /opt/shims/containerd-shim-demo-v2
$good_fetch
rolloutStrategy: {rolling: {maxUpdate: \"100%\"}}"

# The printer columns, with status written the way the coordinator will (status subresource).
kube_admin patch shim spin-v2 --subresource status --type merge -p '{"status": {
  "runtimeClass": "wasmtime-spin-v2", "observedGeneration": 1, "nodes": {"selected": 4, "installed": 3, "failed": 1, "updating": 0},
  "conditions": [{"type": "Ready", "status": "False", "reason": "NodeFailed",
    "message": "node-c: health check failed", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}}' \
    >/dev/null
table=$(kube_admin get shims)
echo "$table"
header=$(head -n 1 <<<"$table")
read -r -a columns <<<"$header"
expected="NAME RUNTIMECLASS SELECTED INSTALLED FAILED READY HALTED AGE"
[[ ${columns[*]} == "$expected" ]] || {
    echo "FAIL: columns are \"${columns[*]}\", expected \"$expected\"" >&2
    exit 1
}
read -r -a row <<<"$(grep '^spin-v2 ' <<<"$table")"
[[ ${row[*]:0:6} == "spin-v2 wasmtime-spin-v2 4 3 1 False" ]] || {
    echo "FAIL: the spin-v2 row reads \"${row[*]}\"" >&2
    exit 1
}
echo "ok: printer columns show RuntimeClass, Selected, Installed, Failed, Ready, Halted and Age"

# Conditions are a map keyed by type: a second Ready condition is refused.
if out=$(kube_admin patch shim spin-v2 --subresource status --type json -p '[{"op": "add",
  "path": "/status/conditions/-", "value": {"type": "Ready", "status": "True", "reason": "Done",
  "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}}]' 2>&1); then
    echo "FAIL: a duplicate Ready condition was accepted" >&2
    exit 1
fi
grep -qF "Duplicate value" <<<"$out" || { echo "FAIL: duplicate condition: $out" >&2; exit 1; }
echo "ok: conditions are keyed by type"
