#!/usr/bin/env bash
# Test 3 of the distro label: the .rpm installs with rpm itself into a Debian 12 rootfs that is
# not running (`rpm --root DIR --initdb`, then `-ivh --nodeps`: the rootfs's libraries come from
# Debian, not from rpm's database). What an image builder checks: every file README lists is in
# the rootfs, the example config is there as a config file, and the unit is enabled for
# multi-user.target by the package's own scriptlet (systemctl working offline in the chroot).
# seconds-about: 25
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/distro.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/debian_rootfs.sh"
distro_init
command -v rpm >/dev/null || skip "rpm is not installed (scripts/install-deps)"
rpm_file=$(distro_packages | grep '\.rpm$')

status=0
debian_rootfs_copy "$T/rootfs" || status=$?
((status == 0)) || { ((status == 77)) && skip "no Debian rootfs"; fail "no Debian rootfs"; }
root=$T/rootfs
[[ ! -e $root/etc/systemd/system/multi-user.target.wants/shimkeeper.service ]] ||
    fail "test setup: the rootfs already has shimkeeper enabled"

rpm --root "$root" --initdb || fail "rpm --initdb failed"
rpm --root "$root" -ivh --nodeps "$rpm_file" >"$T/rpm.out" 2>&1 ||
    fail "rpm -ivh failed: $(cat "$T/rpm.out")"
rpm --root "$root" -q shimkeeper >/dev/null || fail "rpm's database in the rootfs lacks shimkeeper"

while read -r path; do
    if [[ $path == */ ]]; then
        [[ -d $root$path ]] || fail "folder $path is missing from the rootfs"
    else
        [[ -e $root$path ]] || fail "$path is missing from the rootfs"
    fi
done < <(distro_readme_files rpm)
[[ -x $root/usr/bin/shimkeeper ]] || fail "/usr/bin/shimkeeper is not executable"
rpm --root "$root" -qc shimkeeper | grep -qx /etc/shimkeeper/shimkeeper.toml ||
    fail "/etc/shimkeeper/shimkeeper.toml is not a config file of the package"

link=$root/etc/systemd/system/multi-user.target.wants/shimkeeper.service
[[ -L $link ]] || fail "shimkeeper.service is not enabled (no $link): $(cat "$T/rpm.out")"
chroot "$root" systemctl is-enabled shimkeeper.service | grep -qx enabled ||
    fail "systemctl in the rootfs says shimkeeper.service is" \
        "$(chroot "$root" systemctl is-enabled shimkeeper.service)"
echo "ok: the .rpm installed into a Debian rootfs with rpm --root: files present, unit enabled"
