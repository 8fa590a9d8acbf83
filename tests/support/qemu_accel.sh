# shellcheck shell=bash
# Which accelerator a qemu VM gets on this machine: KVM where it works, TCG (qemu's own emulation,
# several times slower) where it does not. /dev/kvm being there is not enough: on some machines
# of this workplace it exists and KVM aborts (shared/DISTRIBUTION.md), so a tiny guest is started
# under KVM first: SeaBIOS boots a 512-byte boot sector whose code writes 1 to qemu's
# isa-debug-exit port, which ends qemu with status 3 (1 << 1 | 1), a status qemu gives only when
# the guest really ran. It takes well under a second where KVM works.
#
#   source tests/support/qemu_accel.sh
#   qemu_accel_choose    # sets QEMU_ACCEL (kvm|tcg), QEMU_CPU (host|max), QEMU_ACCEL_WHY
#   echo "qemu: $QEMU_ACCEL ($QEMU_ACCEL_WHY)"
#
# Under KVM the guest gets the host's CPU (`-cpu host`); under TCG `-cpu max`, every feature TCG
# emulates. SHIMKEEPER_QEMU_ACCEL=tcg forces TCG (the slow path, e.g. to test it on a KVM
# machine); =kvm skips the probe and takes KVM.

# qemu_accel_probe_kvm: 0 when a guest runs under KVM here; otherwise prints why not.
qemu_accel_probe_kvm() {
    if [[ ! -e /dev/kvm ]]; then
        echo "no /dev/kvm"
        return 1
    fi
    if [[ ! -r /dev/kvm || ! -w /dev/kvm ]]; then
        echo "/dev/kvm is not readable and writable for $(id -un)"
        return 1
    fi
    local dir rc=0
    dir=$(mktemp -d "${TMPDIR:-/tmp}/qemu-accel.XXXXXX")
    # mov al, 1; out 0xf4, al; hlt; jmp $ ... then the boot signature.
    { printf '\xb0\x01\xe6\xf4\xf4\xeb\xfe'; head -c 503 /dev/zero; printf '\x55\xaa'; } >"$dir/boot.img"
    timeout --kill-after=5 30 qemu-system-x86_64 -accel kvm -cpu host -machine pc -m 16 \
        -nodefaults -display none -no-reboot -device isa-debug-exit,iobase=0xf4,iosize=0x04 \
        -drive "file=$dir/boot.img,format=raw,if=ide,snapshot=on" >"$dir/out" 2>&1 || rc=$?
    if ((rc != 3)); then
        echo "/dev/kvm is there but a test guest did not run under KVM (qemu exit $rc:" \
            "$(tr '\n' ' ' <"$dir/out" | cut -c1-200 | sed 's/ *$//'))"
        rm -rf "$dir"
        return 1
    fi
    rm -rf "$dir"
}

qemu_accel_choose() {
    local why
    case ${SHIMKEEPER_QEMU_ACCEL:-} in
    tcg) QEMU_ACCEL=tcg QEMU_ACCEL_WHY="SHIMKEEPER_QEMU_ACCEL=tcg" ;;
    kvm) QEMU_ACCEL=kvm QEMU_ACCEL_WHY="SHIMKEEPER_QEMU_ACCEL=kvm (not probed)" ;;
    "")
        if why=$(qemu_accel_probe_kvm); then
            QEMU_ACCEL=kvm QEMU_ACCEL_WHY="/dev/kvm works: a test guest ran under KVM"
        else
            QEMU_ACCEL=tcg QEMU_ACCEL_WHY=$why
        fi
        ;;
    *)
        echo "SHIMKEEPER_QEMU_ACCEL must be kvm or tcg, not '$SHIMKEEPER_QEMU_ACCEL'" >&2
        return 2
        ;;
    esac
    if [[ $QEMU_ACCEL == kvm ]]; then QEMU_CPU=host; else QEMU_CPU=max; fi
    export QEMU_ACCEL QEMU_CPU QEMU_ACCEL_WHY
}
