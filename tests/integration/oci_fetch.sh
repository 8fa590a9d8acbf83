#!/usr/bin/env bash
# Shims from a real OCI registry (plain http, as containerd's hosts.toml for the host says):
# a file from a container image's layers, an artifact's single layer, a multi-platform index
# resolved to this node's architecture; a second fetch makes no request at all; and the
# refusals (no entry for this architecture, a digest pin the registry does not have, a blob
# whose bytes do not match its digest, a whiteout hiding the path), each leaving the store and
# bin/ exactly as they were.
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest, or export it}/tests/support/oci_scenario.sh"
oci_agent_settings
ARCH="$(node_arch)"
WANT="$(sha256_of "$SHIM_SOURCE")"

# --- a container image: the file at `path` --------------------------------------------------
make_image "$T/layout" v1 "$ARCH" put_shim
IMAGE="$(push_image "$T/layout" v1 demo:v1)"
oci_shim "$REG/demo:v1@$IMAGE" "/usr/bin/$BIN"
pushed="$(reg_requests)" # skopeo's own requests
expect_exit 0 sk fetch
[[ -x "$STORE/store/sha256/$WANT/$BIN" ]] || fail "the store lacks sha256/$WANT/$BIN"
cmp -s "$STORE/store/sha256/$WANT/$BIN" "$SHIM_SOURCE" || fail "the stored binary differs"
[[ -z "$(ls -A "$STORE/bin" 2>/dev/null)" ]] || fail "fetch must not link anything into bin/"
[[ -z "$(ls -A "$STORE/tmp")" ]] || fail "fetch left files in tmp/: $(ls -A "$STORE/tmp")"
(($(reg_requests) - pushed == 2)) ||
    fail "expected 2 requests (manifest, layer), got $(($(reg_requests) - pushed))"

# --- the same reference again: zero requests --------------------------------------------------
before="$(reg_requests)"
expect_exit 0 sk fetch
expect_output_contains "already in the store"
[[ "$(reg_requests)" == "$before" ]] || fail "the second fetch asked the registry again"

# --- status names the reference and what this node resolved it to ----------------------------
expect_exit 0 sk -o json status
python3 -S - "$OUT" "$IMAGE" "$WANT" <<'PY' || fail "status lacks the resolution: $(cat "$OUT")"
import json, sys
oci = json.load(open(sys.argv[1]))["desired"][0]["oci"]
assert oci["reference"].endswith("@" + sys.argv[2]) and oci["path"] == "usr/bin/containerd-shim-demo-v2", oci
assert oci["resolved"]["manifest_digest"] == sys.argv[2] and oci["resolved"]["digest"] == sys.argv[3], oci
assert oci["resolved"]["kind"] == "image" and oci["resolved"]["layer_digest"].startswith("sha256:"), oci
PY
expect_exit 0 sk status
expect_output_contains "image for linux/$ARCH: manifest $IMAGE"

# --- an artifact: its single layer is the file ------------------------------------------------
printf '{}' >"$T/empty.json"
cp "$SHIM_SOURCE" "$T/artifact-file"
printf 'artifact' >>"$T/artifact-file" # another digest than the image's file
EMPTY="$(push_blob "$T/empty.json" art)"
LAYER="$(push_blob "$T/artifact-file" art)"
cat >"$T/artifact.json" <<JSON
{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
 "artifactType": "application/vnd.example.shim",
 "config": {"mediaType": "application/vnd.oci.empty.v1+json", "digest": "$EMPTY", "size": 2},
 "layers": [{"mediaType": "application/octet-stream", "digest": "$LAYER",
             "size": $(stat -c %s "$T/artifact-file"),
             "annotations": {"org.opencontainers.image.title": "$BIN"}}]}
JSON
ARTIFACT="$(push_manifest "$T/artifact.json" art v1 application/vnd.oci.image.manifest.v1+json)"
oci_shim "$REG/art:v1@$ARTIFACT"
expect_exit 0 sk fetch
[[ -x "$STORE/store/sha256/${LAYER#sha256:}/$BIN" ]] || fail "the artifact's file is not stored"

# --- a multi-platform index: this node's entry --------------------------------------------------
put_other() { mkdir -p "$1/usr/bin" && printf '#!/bin/sh\necho other\n' >"$1/usr/bin/$BIN"; }
make_image "$T/layout" other "$(other_arch)" put_other
OTHER="$(push_image "$T/layout" other demo:other)"
entry() { # DIGEST ARCH
    local size
    size="$(curl -sSf -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
        "$REG_URL/v2/demo/manifests/$1" | wc -c)"
    echo "{\"mediaType\": \"application/vnd.oci.image.manifest.v1+json\", \"digest\": \"$1\",
           \"size\": $size, \"platform\": {\"os\": \"linux\", \"architecture\": \"$2\"}}"
}
echo "{\"schemaVersion\": 2, \"mediaType\": \"application/vnd.oci.image.index.v1+json\",
       \"manifests\": [$(entry "$OTHER" "$(other_arch)"), $(entry "$IMAGE" "$ARCH")]}" \
    >"$T/index.json"
INDEX="$(push_manifest "$T/index.json" demo multi application/vnd.oci.image.index.v1+json)"
rm -rf "$STORE/store/sha256/$WANT" # the image's file must come through the index now
oci_shim "$REG/demo:multi@$INDEX" "usr/bin/$BIN"
expect_exit 0 sk fetch
cmp -s "$STORE/store/sha256/$WANT/$BIN" "$SHIM_SOURCE" || fail "the index gave another file"

# --- refusals: nothing changes ---------------------------------------------------------------
echo "{\"schemaVersion\": 2, \"mediaType\": \"application/vnd.oci.image.index.v1+json\",
       \"manifests\": [$(entry "$OTHER" "$(other_arch)")]}" >"$T/foreign.json"
FOREIGN="$(push_manifest "$T/foreign.json" demo foreign application/vnd.oci.image.index.v1+json)"
oci_shim "$REG/demo:foreign@$FOREIGN" "usr/bin/$BIN"
expect_fetch_refused 1 "no entry for this node's platform linux/$ARCH" "linux/$(other_arch)"

WRONG="sha256:$(printf 'no such manifest' | sha256sum | cut -d' ' -f1)"
oci_shim "$REG/demo:v1@$WRONG" "usr/bin/$BIN"
expect_fetch_refused 1 "HTTP 404" "manifests/$WRONG"

put_unique() { put_shim "$1" && head -c 4096 /dev/urandom >"$1/usr/bin/unique"; }
make_image "$T/layout" corrupt "$ARCH" put_unique
CORRUPT="$(push_image "$T/layout" corrupt corrupt:v1)"
CORRUPT_LAYER="$(manifest_of corrupt v1 | python3 -S -c 'import json,sys; print(json.load(sys.stdin)["layers"][-1]["digest"])')"
blob="$(blob_path "$DATA" "$CORRUPT_LAYER")"
python3 -S - "$blob" <<'PY'
import sys
path = sys.argv[1]
data = bytearray(open(path, "rb").read())
data[len(data) // 2] ^= 0xFF  # same size, other bytes
open(path, "wb").write(bytes(data))
PY
oci_shim "$REG/corrupt:v1@$CORRUPT" "usr/bin/$BIN"
expect_fetch_refused 1 "checksum mismatch" "${CORRUPT_LAYER#sha256:}"

delete_shim() { rm -f "$1/usr/bin/$BIN"; }
make_image "$T/layout" gone "$ARCH" put_unique
make_image "$T/layout" gone "$ARCH" delete_shim
GONE="$(push_image "$T/layout" gone gone:v1)"
oci_shim "$REG/gone:v1@$GONE" "usr/bin/$BIN"
expect_fetch_refused 1 "usr/bin/$BIN is deleted by the whiteout usr/bin/.wh.$BIN"

# An image needs a path; an unpinned reference needs allow_unverified.
oci_shim "$REG/demo:v1@$IMAGE"
expect_fetch_refused 2 "is a container image; set fetch path"
oci_shim "$REG/demo:v1" "usr/bin/$BIN"
expect_exit 2 sk fetch
expect_output_contains "has no @sha256: digest"
