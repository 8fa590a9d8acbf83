# shellcheck shell=bash
# Which accelerator a qemu VM gets on this machine: KVM where it works, TCG (qemu's own emulation,
# several times slower) where it does not. /dev/kvm being there is not enough: on some machines
# of this workplace it exists and KVM aborts (shared/DISTRIBUTION.md), so a tiny guest is started
# under KVM first: SeaBIOS boots a 512-byte boot sector whose code writes 1 to qemu's
# isa-debug-exit port, which ends qemu with status 3 (1 << 1 | 1), a status qemu gives only when
# the guest really ran. It takes well under a second where KVM works.
#
# A boot sector running is not enough either: on machines whose /dev/kvm is PVM (kvm-pvm, a KVM
# without hardware virtualization, in dmesg) the boot sector runs, and so does a Linux kernel's
# real-mode setup, but the kernel hangs on entering protected mode, printing nothing more and
# spinning a core until the test's timeout. Given the kernel the VM will boot, the probe then
# boots it too and takes KVM only when it prints its banner.
#
#   source tests/support/qemu_accel.sh
#   qemu_accel_choose [KERNEL]  # sets QEMU_ACCEL (kvm|tcg), QEMU_CPU (host|max), QEMU_ACCEL_WHY
#   echo "qemu: $QEMU_ACCEL ($QEMU_ACCEL_WHY)"
#
# Under KVM the guest gets the host's CPU (`-cpu host`); under TCG `-cpu max`, every feature TCG
# emulates. SHIMKEEPER_QEMU_ACCEL=tcg forces TCG (the slow path, e.g. to test it on a KVM
# machine); =kvm skips the probe and takes KVM.

# qemu_accel__flat FILE WIDTH: FILE's text on one line, cut to WIDTH characters, for a reason.
qemu_accel__flat() {
    tr '\n' ' ' <"$1" | cut -c1-"$2" | sed 's/ *$//'
}

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
            "$(qemu_accel__flat "$dir/out" 200))"
        rm -rf "$dir"
        return 1
    fi
    rm -rf "$dir"
}

# qemu_accel_probe_kernel KERNEL: 0 when KERNEL, booted under KVM with no disk, prints its banner
# ("Linux version", the first line of the kernel proper, after the switch to protected and long
# mode) within 15 s; it takes well under a second where KVM works. Otherwise prints why not.
qemu_accel_probe_kernel() {
    local kernel=$1 dir pid tenths=0
    dir=$(mktemp -d "${TMPDIR:-/tmp}/qemu-accel.XXXXXX")
    qemu-system-x86_64 -accel kvm -cpu host -machine pc -m 256 -nodefaults -display none \
        -no-reboot -serial "file:$dir/serial" -kernel "$kernel" \
        -append "console=ttyS0 earlyprintk=serial panic=-1" >"$dir/out" 2>&1 &
    pid=$!
    until grep -q "Linux version" "$dir/serial" 2>/dev/null; do
        if ! kill -0 "$pid" 2>/dev/null || ((tenths >= 150)); then
            kill -KILL "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
            echo "/dev/kvm runs a boot sector, but $kernel under KVM printed no banner within" \
                "15 s (its serial console: $(qemu_accel__flat "$dir/serial" 120);" \
                "qemu: $(qemu_accel__flat "$dir/out" 120))"
            rm -rf "$dir"
            return 1
        fi
        sleep 0.1
        tenths=$((tenths + 1))
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
    rm -rf "$dir"
}

qemu_accel_choose() {
    local kernel=${1:-} why
    case ${SHIMKEEPER_QEMU_ACCEL:-} in
    tcg) QEMU_ACCEL=tcg QEMU_ACCEL_WHY="SHIMKEEPER_QEMU_ACCEL=tcg" ;;
    kvm) QEMU_ACCEL=kvm QEMU_ACCEL_WHY="SHIMKEEPER_QEMU_ACCEL=kvm (not probed)" ;;
    "")
        if ! why=$(qemu_accel_probe_kvm); then
            QEMU_ACCEL=tcg QEMU_ACCEL_WHY=$why
        elif [[ -n $kernel ]] && ! why=$(qemu_accel_probe_kernel "$kernel"); then
            QEMU_ACCEL=tcg QEMU_ACCEL_WHY=$why
        elif [[ -n $kernel ]]; then
            QEMU_ACCEL=kvm QEMU_ACCEL_WHY="/dev/kvm works: a test guest and $(basename "$(readlink -f "$kernel")") ran under KVM"
        else
            QEMU_ACCEL=kvm QEMU_ACCEL_WHY="/dev/kvm works: a test guest ran under KVM"
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
