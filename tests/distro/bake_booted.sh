#!/usr/bin/env bash
# Issue 9's bake on a real image: a Debian 12 rootfs that is not running gets the .deb offline
# (dpkg in a chroot: the unit is enabled, not started) and a shims.d/ drop-in, then the image's
# own /usr/bin/shimkeeper, run from the host, bakes it (`bake --root`; containerd's version from
# the image's dpkg database). What an image builder sees:
#   1. a bake into the image whose containerd config is not TOML is refused with exit 2, naming
#      the file and the place, before anything is written: the whole root byte for byte as it was;
#   2. the bake: exit 0, "Baked generation 1", the shim downloaded once, the unit enabled;
#   3. the first boot (systemd as PID 1 under nspawn): not one request to the artifact server,
#      containerd.service started once (the boot itself), shimkeeper.service active with no
#      transaction of its own, the handler in CRI at the baked binary, a container run through it.
# seconds-about: 20
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/distro.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/debian_rootfs.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/booted_node.sh"
distro_init
deb=$(distro_packages | grep '\.deb$')
command -v chroot >/dev/null || skip "chroot is missing (coreutils)"

status=0
debian_rootfs_copy "$T/rootfs" || status=$?
((status == 0)) || { ((status == 77)) && skip "no Debian rootfs"; fail "no Debian rootfs"; }
root=$T/rootfs

# whole_root_digest: every entry of the root (path, type, mode, owner, link target) and every
# file's sha256. Nothing is left out: an image is not running, so nothing but the bake writes it.
# Times are not compared (reading a file is no change).
whole_root_digest() {
    (cd "$root" && find . -printf '%p %y %m %U:%G %l\n' | LC_ALL=C sort &&
        find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum)
}

# The package, installed offline as an image build does it.
cp "$deb" "$root/root/"
chroot "$root" dpkg -i "/root/$(basename "$deb")" >"$T/dpkg.log" 2>&1 ||
    fail "dpkg -i in the chroot failed: $(tail -20 "$T/dpkg.log")"
rm "$root/root/$(basename "$deb")"
containerd_version=$(dpkg-query --admindir="$root/var/lib/dpkg" -W -f '${Version}' containerd)

# The shim: the image's own containerd-shim-runc-v2 renamed, served from the host's 127.0.0.1.
distro_serve_shims "$root" demo
write_shim_toml "$root/etc/shimkeeper/shims.d/10-demo.toml" demo demo "$SERVER_URL/demo.tar.gz" \
    "$(sha256_of "$T/artifacts/demo.tar.gz")"
# As README writes it: `shimkeeper bake --root DIR`, the image's own binary run from the host.
bake() { "$root/usr/bin/shimkeeper" bake --root "$root"; }

# --- 1. refused: containerd's config is not TOML. Nothing written, nothing downloaded.
config=$root/etc/containerd/config.toml
cp -a "$config" "$T/config.toml"
printf 'version = 2\n[plugins\n' >"$config"
whole_root_digest >"$T/root.before"
expect_exit 2 bake
expect_output_contains "/etc/containerd/config.toml:2:9: invalid TOML"
whole_root_digest >"$T/root.after"
cmp -s "$T/root.before" "$T/root.after" ||
    fail "a refused bake changed the root: $(diff "$T/root.before" "$T/root.after" | head -20)"
(($(sk_requests) == 0)) || fail "a refused bake made $(sk_requests) requests"
cp -a "$T/config.toml" "$config"

# --- 2. the bake.
expect_exit 0 bake
expect_output_contains "containerd ${containerd_version%%~*} (/var/lib/dpkg/status: containerd $containerd_version)"
expect_output_contains "Baked generation 1 into $root"
# dpkg's postinst already enabled the unit (deb-systemd-helper); the bake keeps that link.
expect_output_contains "shimkeeper.service already enabled."
[[ "$(readlink "$root/etc/systemd/system/multi-user.target.wants/shimkeeper.service")" == \
    /lib/systemd/system/shimkeeper.service ]] || fail "shimkeeper.service is not enabled in the image"
(($(sk_requests) == 1)) || fail "the bake made $(sk_requests) requests, expected 1"
baked_txn=$(python3 -S -c 'import json, sys; print(json.load(open(sys.argv[1]))["id"])' \
    "$root/var/lib/shimkeeper/state/journal.json")
sk_reset_requests

# --- 3. the first boot.
distro_busybox_box "$root"
# The boot's own start of containerd.service must be the only one.
distro_count_containerd_starts "$root"
boot_node "$root"
daemon_log() { boot_run journalctl -u shimkeeper --no-pager | tail -20; }
[[ "$(boot_run systemctl is-active shimkeeper)" == active ]] ||
    fail "shimkeeper.service is $(boot_run systemctl is-active shimkeeper) after the first boot: $(daemon_log)"
(($(sk_requests) == 0)) || fail "the first boot made $(sk_requests) requests to the artifact server: $(daemon_log)"
starts=$(boot_run sh -c 'wc -l </run/containerd-starts')
((starts == 1)) || fail "containerd.service started $starts times at first boot, expected once: $(daemon_log)"
# The daemon's first reconcile (done before READY=1) found the node converged: no transaction.
boot_run cat /run/shimkeeper/status.json >"$T/status.json" || fail "no /run/shimkeeper/status.json in the node"
python3 -S - "$T/status.json" <<'PY' || fail "the daemon's first run was not a no-op: $(daemon_log)"
import json, sys
result = json.load(open(sys.argv[1]))["result"]
assert result["changed"] is False and result["generation"] == 1 and result["restarts"] == 0, result
PY
boot_run shimkeeper status >"$T/status.out" 2>&1 || true
grep -q "Last transaction: apply $baked_txn committed" "$T/status.out" ||
    fail "the last transaction is not the bake's ($baked_txn): $(cat "$T/status.out")"
grep -q "handler demo: registered -> /var/lib/shimkeeper/bin/containerd-shim-demo-v2" "$T/status.out" ||
    fail "the running containerd's CRI does not list demo at the baked shim: $(cat "$T/status.out")"
out=$(boot_run ctr run --rm --runtime /var/lib/shimkeeper/bin/containerd-shim-demo-v2 \
    --rootfs /srv/box c1 /bin/echo "hello from c1") || fail "ctr run through the baked shim failed: $out"
[[ $out == "hello from c1" ]] || fail "the container printed: $out"
boot_poweroff
echo "ok: a refused bake left the image untouched; the baked image booted converged (no request, one containerd start) and ran a container through the shim"
