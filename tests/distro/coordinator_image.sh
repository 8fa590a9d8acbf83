#!/usr/bin/env bash
# The coordinator's OCI image (scripts/image), as a cluster would get it:
#   - two builds of this tree print one manifest digest and write the same archive byte for byte
#     (the second reuses the cached Debian root, never the assembly that decides the digest);
#   - skopeo reads the archive and finds that digest; the image's config runs
#     `/usr/bin/shimkeeper coordinate` as 65532:65532;
#   - umoci unpacks it into a runtime bundle, and a real OCI runtime (runc, else crun) runs the
#     entrypoint's binary from it as that user on a read-only root: `shimkeeper --version` and
#     `shimkeeper coordinate --help` work, and there is no shell to run.
# The first build also builds the .deb when build/packages/ lacks this tree's (minutes on a cold
# compiler cache) and, once per package list, the Debian root (mmdebstrap).
# seconds-about: 40
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
set -euo pipefail
(($(id -u) == 0)) || skip "scripts/image needs root (mmdebstrap)"
# Not sk_init: this test runs the image's binary, not the ci build's ($SHIMKEEPER).
T=$(mktemp -d "${TMPDIR:-/tmp}/sk-test.XXXXXX")
trap sk__cleanup EXIT
for tool in mmdebstrap umoci skopeo jq dpkg-deb strip; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/install-deps)"
done
# runc first: crun refuses hybrid cgroup hierarchies (as on this project's test machines).
runtime=$(command -v runc || command -v crun) || skip "neither runc nor crun is installed"

version=$(sed -nE 's/^project\(shimkeeper VERSION ([0-9.]+).*/\1/p' \
    "$SHIMKEEPER_SOURCE_DIR/CMakeLists.txt")
# field OUTPUT KEY: the value of one "KEY value" line scripts/image printed.
field() { awk -v key="$2" '$1 == key { sub(/^[^ ]+ /, ""); print; exit }' <<<"$1"; }

first=$("$SHIMKEEPER_SOURCE_DIR/scripts/image" --output "$T/first.oci.tar") ||
    fail "scripts/image failed"
echo "$first"
second=$("$SHIMKEEPER_SOURCE_DIR/scripts/image" --output "$T/second.oci.tar") ||
    fail "scripts/image failed the second time"
digest=$(field "$first" digest)
[[ $digest =~ ^sha256:[0-9a-f]{64}$ ]] || fail "scripts/image printed no digest: $first"
[[ $(field "$second" digest) == "$digest" ]] ||
    fail "two builds of one tree gave two digests: $digest, then $(field "$second" digest)"
cmp -s "$T/first.oci.tar" "$T/second.oci.tar" || fail "two builds of one tree wrote different archives"
echo "ok: two builds, one digest $digest; $(field "$first" size)"
[[ $(field "$first" name) == "localhost/shimkeeper:$version" ]] ||
    fail "the image is named '$(field "$first" name)', not localhost/shimkeeper:$version"

inspected=$(skopeo inspect "oci-archive:$T/first.oci.tar:$version") ||
    fail "skopeo cannot read the archive by its tag $version"
[[ $(jq -r .Digest <<<"$inspected") == "$digest" ]] ||
    fail "skopeo reads digest $(jq -r .Digest <<<"$inspected"), scripts/image printed $digest"
config=$(skopeo inspect --config "oci-archive:$T/first.oci.tar:$version")
[[ $(jq -r .config.User <<<"$config") == 65532:65532 ]] ||
    fail "the image runs as '$(jq -r .config.User <<<"$config")', not the non-root 65532:65532"
[[ $(jq -c .config.Entrypoint <<<"$config") == '["/usr/bin/shimkeeper","coordinate"]' ]] ||
    fail "the entrypoint is $(jq -c .config.Entrypoint <<<"$config")"
echo "ok: skopeo reads $digest; user 65532:65532, entrypoint shimkeeper coordinate"

mkdir -p "$T/layout"
tar -C "$T/layout" -xf "$T/first.oci.tar"
umoci unpack --image "$T/layout:$version" "$T/bundle" >/dev/null || fail "umoci cannot unpack the image"
bundle_config=$T/bundle/config.json
[[ $(jq -r '"\(.process.user.uid):\(.process.user.gid)"' "$bundle_config") == 65532:65532 ]] ||
    fail "umoci's runtime config runs as $(jq -c .process.user "$bundle_config")"
[[ ! -e $T/bundle/rootfs/bin/sh && ! -e $T/bundle/rootfs/usr/bin/apt-get ]] ||
    fail "the image holds a shell or apt"
# The image's binary is the one the .deb ships (scripts/image takes it from the package), stripped.
deb=$("$SHIMKEEPER_SOURCE_DIR/scripts/package" deb 2>/dev/null | tail -n1) || fail "scripts/package deb failed"
dpkg-deb -x "$deb" "$T/deb"
strip --strip-all -o "$T/deb-shimkeeper" "$T/deb/usr/bin/shimkeeper"
cmp -s "$T/deb-shimkeeper" "$T/bundle/rootfs/usr/bin/shimkeeper" ||
    fail "the image's /usr/bin/shimkeeper is not the binary $deb ships"

# run_in_image NAME ARG...: ARGs as the image's process (its user, a read-only root, no
# terminal) under the OCI runtime; prints what it wrote.
run_in_image() {
    local name=$1
    shift
    local args
    # (jq's --args would take an argument such as --version for an option of its own.)
    args=$(printf '%s\n' "$@" | jq -R . | jq -cs .)
    jq --argjson args "$args" '.process.args = $args | .process.terminal = false |
        .root.readonly = true' <"$bundle_config" >"$bundle_config.new"
    mv "$bundle_config.new" "$bundle_config"
    "$runtime" run --bundle "$T/bundle" "sk-image-test-$$-$name" </dev/null 2>&1
}
out=$(run_in_image version /usr/bin/shimkeeper --version) ||
    fail "shimkeeper --version failed in the image under $runtime: $out"
grep -q "$version" <<<"$out" || fail "shimkeeper --version in the image says '$out', not $version"
[[ $(jq -r .root.readonly "$bundle_config") == true ]] || fail "the root was not read-only"
echo "ok: $runtime runs shimkeeper --version in the image as 65532 on a read-only root: $out"
out=$(run_in_image help /usr/bin/shimkeeper coordinate --help) ||
    fail "shimkeeper coordinate --help failed in the image: $out"
grep -qi "coordinat" <<<"$out" || fail "shimkeeper coordinate --help in the image says: $out"
echo "ok: shimkeeper coordinate --help runs in the image"
if out=$(run_in_image shell /bin/sh -c true); then
    fail "the image ran /bin/sh: $out"
fi
echo "ok: there is no shell to run in the image"
