#!/usr/bin/env bash
# `shimkeeper bake --root DIR` into an image root that is not running. Refusals first, each
# leaving the whole tree byte for byte as it was (a listing with every file's sha256 before and
# after): no containerd in the image's dpkg database, an rpm root without --containerd-version,
# a malformed --containerd-version, no shimkeeper unit in the image, a containerd config that is
# not TOML, a handler defined outside shimkeeper's blocks. Then a bake: the shim downloaded once,
# the config edited with node paths, bin/ links, generation 1 recorded, the unit enabled; a
# second bake changes nothing and makes no request; `plan` on the baked root has nothing to do.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest}/tests/support/common.sh"
sk_init
command -v containerd >/dev/null || skip "containerd is missing (Debian's containerd)"

mkdir -p "$T/www" "$ROOT/etc/containerd" "$ROOT/var/lib/dpkg" "$ROOT/lib/systemd/system"
make_shim_archive "$(shim_binary_for demo)" "$T/www/demo.tar.gz"
sk_start_server "$T/www"
write_shim_toml "$ROOT/etc/shimkeeper/shims.d/10-demo.toml" demo demo "$SERVER_URL/demo.tar.gz" \
    "$(sha256_of "$T/www/demo.tar.gz")"
containerd config default >"$ROOT/etc/containerd/config.toml"
cp "$ROOT/etc/containerd/config.toml" "$T/original.toml"
cp "$SHIMKEEPER_SOURCE_DIR/units/shimkeeper.service" "$ROOT/lib/systemd/system/"

# dpkg_status PACKAGE VERSION: the image's package database with that package installed.
dpkg_status() {
    cat >"$ROOT/var/lib/dpkg/status" <<STATUS
Package: runc
Status: install ok installed
Version: 1.1.5+ds1-1+deb12u1
Description: open container project
 runtime

Package: $1
Status: install ok installed
Priority: optional
Version: $2
Description: daemon to control runC

STATUS
}

# expect_refused CODE TEXT ARGS...: bake exits CODE naming TEXT and changes nothing in $ROOT.
expect_refused() {
    local code=$1 text=$2 before
    shift 2
    before=$(tree_digest "$ROOT")
    expect_exit "$code" sk bake "$@"
    expect_output_contains "$text"
    [[ "$(tree_digest "$ROOT")" == "$before" ]] || fail "a refused bake ($text) changed the root"
    ((SERVER_REQUESTS_BEFORE == $(sk_requests))) || fail "a refused bake ($text) downloaded"
}
SERVER_REQUESTS_BEFORE=0

# No containerd in the image: only runc and something else are installed (or containerd only
# half-removed, its config files left).
dpkg_status docker.io 20.10.24+dfsg1-1+b3
expect_refused 2 "the image has no containerd: neither package containerd nor containerd.io is installed according to $ROOT/var/lib/dpkg/status"
sed -i 's/^Package: docker.io/Package: containerd/; s/^Status: install ok installed$/Status: deinstall ok config-files/' "$ROOT/var/lib/dpkg/status"
expect_refused 2 "the image has no containerd"
# An rpm root: its database is not read; the flag is the way.
mv "$ROOT/var/lib/dpkg" "$T/dpkg"
mkdir -p "$ROOT/var/lib/rpm"
expect_refused 2 "holds an rpm database, which shimkeeper does not read: give the image's containerd version with --containerd-version"
rmdir "$ROOT/var/lib/rpm"
expect_refused 2 "has no dpkg database"
mv "$T/dpkg" "$ROOT/var/lib/dpkg"
expect_refused 2 "--containerd-version '1.7' is not a version like 1.7.22" --containerd-version 1.7
dpkg_status containerd 1.6.20~ds1-1+deb12u1
# Not the host: bake is for image roots.
before=$(tree_digest "$ROOT")
expect_exit 2 "$SHIMKEEPER" bake
expect_output_contains "bake needs --root DIR"
expect_exit 2 "$SHIMKEEPER" --root / bake # only inside a chroot, and this / is the host's
expect_output_contains "bake --root / is only for a chroot into an image root"
# No shimkeeper unit in the image.
mv "$ROOT/lib/systemd/system/shimkeeper.service" "$T/unit"
expect_refused 2 "shimkeeper.service is in neither $ROOT/lib/systemd/system nor $ROOT/usr/lib/systemd/system"
mv "$T/unit" "$ROOT/lib/systemd/system/shimkeeper.service"
# A broken containerd config: not TOML, or a handler shimkeeper must not take over.
printf 'version = 2\n[plugins\n' >"$ROOT/etc/containerd/config.toml"
expect_refused 2 "/etc/containerd/config.toml:2:9: invalid TOML"
cp "$T/original.toml" "$ROOT/etc/containerd/config.toml"
printf '[plugins."io.containerd.grpc.v1.cri".containerd.runtimes.demo]\n  runtime_type = "io.containerd.runc.v2"\n' \
    >>"$ROOT/etc/containerd/config.toml"
expect_refused 1 "/etc/containerd/config.toml:$(($(wc -l <"$T/original.toml") + 1)): runtime handler \"demo\" is already defined here, outside shimkeeper's blocks"
cp "$T/original.toml" "$ROOT/etc/containerd/config.toml"

# The bake.
expect_exit 0 sk bake
expect_output_contains "containerd 1.6.20 (/var/lib/dpkg/status: containerd 1.6.20~ds1-1+deb12u1)"
expect_output_contains "Baked generation 1 into $ROOT"
expect_output_contains "shimkeeper.service enabled"
config="$ROOT/etc/containerd/config.toml"
# containerd 1.6 ignores runtime_path (#8207): the absolute node path is the runtime_type.
grep -qF 'runtime_type = "/var/lib/shimkeeper/bin/containerd-shim-demo-v2"' "$config" ||
    fail "the runtime does not point at the node path of the shim: $(grep -n demo "$config")"
! grep -qF "$ROOT" "$config" || fail "a --root path leaked into the config"
[[ "$(readlink "$ROOT/var/lib/shimkeeper/bin/containerd-shim-demo-v2")" == /var/lib/shimkeeper/store/sha256/* ]] ||
    fail "the bin/ link does not hold the node path"
[[ "$(readlink "$ROOT/etc/systemd/system/multi-user.target.wants/shimkeeper.service")" == /lib/systemd/system/shimkeeper.service ]] ||
    fail "the unit is not enabled with a link to its node path"
python3 -S - "$ROOT/var/lib/shimkeeper/state/state.json" <<'PY'
import json, sys
state = json.load(open(sys.argv[1]))
assert state["current"] == 1, state["current"]
PY
[[ $(sk_requests) == 1 ]] || fail "the bake made $(sk_requests) requests, expected 1"
[[ ! -e "$ROOT/var/lib/shimkeeper/state/containerd-version" ]] || fail "bake ran the image's containerd"
# Inode records would not survive the copy onto the image's disk: the node makes its own.
[[ ! -e "$ROOT/var/lib/shimkeeper/state/fingerprints" ]] || fail "bake left tamper records in the image"
containerd --config "$config" config dump >/dev/null || fail "containerd cannot read the baked config"

# A second bake: nothing changes, nothing is downloaded.
before=$(tree_digest "$ROOT")
expect_exit 0 sk bake
expect_output_contains "Nothing to do: the image already holds generation 1"
expect_output_contains "already enabled"
[[ "$(tree_digest "$ROOT")" == "$before" ]] || fail "a second bake changed the root"
[[ $(sk_requests) == 1 ]] || fail "a second bake made a request"

# What the node will plan at first boot, from the same files: nothing.
expect_exit 0 sk plan
expect_output_contains "Nothing to do."

# containerd 1.7 images (Docker's containerd.io package) get runtime_type + runtime_path.
rm -rf "$ROOT/var/lib/shimkeeper" "$ROOT/etc/systemd"
cp "$T/original.toml" "$config"
dpkg_status containerd.io 1.7.22-1
expect_exit 0 sk bake
expect_output_contains "containerd 1.7.22 (/var/lib/dpkg/status: containerd.io 1.7.22-1)"
grep -qF 'runtime_path = "/var/lib/shimkeeper/bin/containerd-shim-demo-v2"' "$config" ||
    fail "containerd 1.7: no runtime_path written"
grep -qF 'runtime_type = "io.containerd.demo.v2"' "$config" || fail "containerd 1.7: runtime_type"
# The flag wins over the database.
rm -rf "$ROOT/var/lib/shimkeeper" "$ROOT/etc/systemd"
cp "$T/original.toml" "$config"
expect_exit 0 sk bake --containerd-version 1.6.33
expect_output_contains "containerd 1.6.33 (given with --containerd-version)"
grep -qF 'runtime_type = "/var/lib/shimkeeper/bin/containerd-shim-demo-v2"' "$config" ||
    fail "--containerd-version 1.6.33 did not give the absolute runtime_type"
