#!/usr/bin/env bash
# Test 7 of the distro label, the slow tier (a VM: about 3 minutes warm on two busy cores under
# TCG): the Packer template (image-builder/packer/) as an operator runs it, both builds for real.
#   1. build `bake`: the Ansible role installs the .deb into a Debian 12 root with a kernel over
#      Ansible's chroot connection and bakes one shim, served from the host's 127.0.0.1 (the
#      root's own containerd-shim-runc-v2 renamed); `mkfs.ext4 -d` makes the raw disk;
#   2. build `boot`: qemu boots that disk with the image's own kernel (pure cgroup v2), under KVM
#      where /dev/kvm works (tests/support/qemu_accel.sh probes it) and TCG otherwise,
#      with no way out to a network; the template's first-boot check reports on the serial console
#      and the guest powers itself off.
# Asserted from the serial log: the handler demo registered at the baked binary, /sys/fs/cgroup a
# cgroup2 filesystem, containerd.service started once, shimkeeper.service active with no restart
# and no transaction of its own (the last one is the bake's: nothing downloaded, nothing
# restarted), the check's verdict ok; both `packer build`s exit 0. A hung VM is stopped by the
# template's boot_timeout (and `timeout` around packer) and the test shows the serial log's tail.
# seconds-about: 100
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/distro.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/debian_rootfs.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/qemu_accel.sh"
distro_init
for tool in packer ansible-playbook qemu-system-x86_64 mkfs.ext4; do
    command -v "$tool" >/dev/null || skip "$tool is missing (scripts/install-deps)"
done
deb=$(distro_packages | grep '\.deb$')
ib=$SHIMKEEPER_SOURCE_DIR/image-builder

# The image: the cached rootfs (which has python3 and python3-apt for Ansible) plus Debian's
# kernel, whose initramfs-tools hook makes the initrd inside the root.
status=0
debian_rootfs_copy "$T/rootfs" linux-image-amd64,initramfs-tools || status=$?
((status == 0)) || { ((status == 77)) && skip "no Debian rootfs"; fail "no Debian rootfs"; }
root=$T/rootfs
[[ -e $root/vmlinuz && -e $root/initrd.img ]] || fail "the rootfs has no /vmlinuz or /initrd.img"
chroot "$root" lsinitramfs /initrd.img >"$T/initrd.list" || fail "lsinitramfs cannot read the initrd"
for module in virtio_blk ext4; do
    grep -q "/$module\.ko" "$T/initrd.list" || fail "the initrd lacks $module: the VM cannot mount /"
done

distro_serve_shims "$root" demo
# The role's variables. install_now: the shim is fetched during the bake, none at first boot.
cat >"$T/shims.yml" <<EOF
shimkeeper_deb: $deb
shimkeeper_install_now: true
shimkeeper_shims:
  - name: demo
    handler: demo
    runtime_type: io.containerd.demo.v2
    binary: containerd-shim-demo-v2
    url: $SERVER_URL/demo.tar.gz
    sha256: "$(sha256_of "$T/artifacts/demo.tar.gz")"
EOF

# A qemu left behind by a packer that had to be killed: found by this test's own serial log path.
stray_qemu_cleanup() {
    local rc=$? pid
    set +e
    for pid in $(pgrep -f -- "file:$T/output/serial.log"); do
        kill -9 "$pid"
    done
    (exit "$rc")
    sk__cleanup
}
trap stray_qemu_cleanup EXIT

qemu_accel_choose "$root/vmlinuz"
echo "qemu accelerator for the boot: $QEMU_ACCEL (-cpu $QEMU_CPU): $QEMU_ACCEL_WHY"

# packer_build BUILD: one build of the template, bounded, its output in $T/BUILD.log (Packer's
# own debug log, which holds the qemu command line, in $T/BUILD.debug.log).
packer_build() {
    (cd "$T" && PACKER_CACHE_DIR=$T/packer_cache PACKER_LOG=1 PACKER_LOG_PATH="$T/${1%%.*}.debug.log" \
        timeout --kill-after=30 600 \
        packer build -color=false -only="$1" -var rootfs="$root" -var shims_file="$T/shims.yml" \
        -var output_directory="$T/output" -var boot_timeout=8m -var accelerator="$QEMU_ACCEL" \
        "$ib/packer") >"$T/${1%%.*}.log" 2>&1
}
serial=$T/output/serial.log
serial_report() { # what the check printed, then the serial log's tail (how far the boot got)
    echo "--- the check's lines on the serial console:"
    tr -d '\r' <"$serial" 2>/dev/null | grep 'shimkeeper-image-check:' || echo "(none: it never ran)"
    echo "--- the serial log's last lines ($serial):"
    tr -d '\r' <"$serial" 2>/dev/null | tail -n 30
}

# --- 1. bake: the role over the chroot connection, then the raw disk.
started=$SECONDS
packer_build bake.null.rootfs || fail "packer build of bake failed: $(tail -n 30 "$T/bake.log")"
echo "the bake took $((SECONDS - started)) s"
[[ -s $T/output/disk.img ]] || fail "the bake made no disk: $(tail -n 30 "$T/bake.log")"
(($(sk_requests_for /demo.tar.gz) == 1)) ||
    fail "the bake downloaded the shim $(sk_requests_for /demo.tar.gz) times, not once"
chroot "$root" shimkeeper status >"$T/baked.status" 2>&1 || fail "status in the baked root failed"
baked_txn=$(sed -n 's/^Last transaction: \(.*\) committed .*/\1/p' "$T/baked.status")
[[ -n $baked_txn ]] || fail "the baked root records no committed transaction: $(cat "$T/baked.status")"

# --- 2. boot: the image checks itself and powers off.
started=$SECONDS
if ! packer_build boot.qemu.first-boot; then
    fail "packer build of boot failed after $((SECONDS - started)) s: $(tail -n 15 "$T/boot.log")" \
        "$(serial_report)"
fi
uptimes=$(tr -d '\r' <"$serial" | sed -n 's/.*shimkeeper-image-check: up \([0-9.]*\) s.*/\1/p')
echo "the check boot took $((SECONDS - started)) s (guest uptime when the check began/ended:" \
    "$(echo "$uptimes" | paste -sd/) s)"
expect_serial() { # TEXT WHAT: the serial log holds TEXT (a fixed string)
    grep -qF -- "$1" < <(tr -d '\r' <"$serial") || fail "$2 (no line '$1'): $(serial_report)"
}
expect_serial "handler demo: registered -> /var/lib/shimkeeper/bin/containerd-shim-demo-v2" \
    "CRI does not list demo at the baked binary"
expect_serial "/sys/fs/cgroup is cgroup2fs" "the VM does not run pure cgroup v2"
expect_serial "containerd.service started 1 times in this boot" "containerd did not start exactly once"
expect_serial "shimkeeper.service active, 0 restarts" "shimkeeper.service is not active without restarts"
expect_serial "Last transaction: $baked_txn committed" \
    "the daemon made a transaction of its own at first boot (downloads or a restart)"
expect_serial "shimkeeper-image-check: ok" "the check's verdict is not ok"
grep -q "Build 'boot.qemu.first-boot' finished" "$T/boot.log" ||
    fail "packer does not report the boot build finished: $(tail -n 15 "$T/boot.log")"
qemu_command=$(grep -m1 'Executing .*qemu-system' "$T/boot.debug.log") ||
    fail "Packer's debug log holds no qemu command line: $T/boot.debug.log"
[[ $qemu_command == *accel=$QEMU_ACCEL* && $qemu_command == *'"-cpu", "'$QEMU_CPU'"'* ]] ||
    fail "Packer's qemu did not run with accel=$QEMU_ACCEL and -cpu $QEMU_CPU: $qemu_command"
echo "ok: baked with the role, booted offline under ${QEMU_ACCEL^^}: demo registered, cgroup v2," \
    "one containerd start, no transaction at first boot"
