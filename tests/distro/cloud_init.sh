#!/usr/bin/env bash
# Test 6 of the distro label: image-builder/cloud-init/user-data as a NoCloud seed on a booted
# Debian 12 with Debian's cloud-init (systemd as PID 1 under nspawn, Debian's containerd). The
# seed is the shipped file with only its @PLACEHOLDERS@ filled in: the shim's URL (served from
# the host's 127.0.0.1, which nspawn shares) and sha256, and the path of the .deb copied into the
# image (offline: no apt repository carries shimkeeper here; the rootfs has its dependencies).
# What an operator sees:
#   1. first boot: `cloud-init status --wait` says done, from the NoCloud datasource, and every
#      cloud-init unit succeeded;
#   2. shimkeeper.service enabled and active; containerd restarted once, through the system bus,
#      by shimkeeper; `shimkeeper status` lists the handler at the installed shim, which runs a
#      container; the shim was downloaded once; the apply's output is in cloud-init's log;
#   3. second boot of the same instance: cloud-init does not run the commands again, the daemon
#      is running without restarting containerd, and the shim still runs containers;
#   4. a new instance-id with a wrong sha256 in the user-data: `cloud-init status` says error (the
#      shipped runcmd fails as a whole), its output log says why, the node keeps its shim;
#   5. the package named instead of a path, on a fresh image whose own apt sources carry it (a flat
#      repository served from the host): first boot installs it from there and converges.
# seconds-about: 30
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/distro.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/debian_rootfs.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/booted_node.sh"
distro_init
deb=$(distro_packages | grep '\.deb$')
user_data=$SHIMKEEPER_SOURCE_DIR/image-builder/cloud-init/user-data

# fresh_image ROOT: a private copy of the cached rootfs with cloud-init switched on, for this host.
fresh_image() {
    local status=0
    debian_rootfs_copy "$1" || status=$?
    ((status == 0)) || { ((status == 77)) && skip "no Debian rootfs"; fail "no Debian rootfs"; }
    rm "$1/etc/cloud/cloud-init.disabled" # the cached rootfs has cloud-init switched off
    # Not in the seed: nspawn shares the host's network namespace, so the node must not
    # configure interfaces.
    printf 'network: {config: disabled}\n' >"$1/etc/cloud/cloud.cfg.d/99-host-network.cfg"
}
# write_seed ROOT PACKAGE INSTANCE_ID: the shipped user-data with its placeholders filled in, and
# an instance-id (NoCloud requires meta-data; a new instance-id is what makes cloud-init treat a
# boot as the first). Nothing else makes cloud-init take the seed: at boot its generator runs
# ds-identify, which finds NoCloud by the seed folder itself (status: "enabled-by-generator").
write_seed() {
    local seed=$1/var/lib/cloud/seed/nocloud left
    mkdir -p "$seed"
    sed -e "s|@SHIM_URL@|$SERVER_URL/spin.tar.gz|" \
        -e "s|@SHIM_SHA256@|$(sha256_of "$T/artifacts/spin.tar.gz")|" \
        -e "s|@SHIMKEEPER_PACKAGE@|$2|" "$user_data" >"$seed/user-data"
    left=$(grep -v '^ *#' "$seed/user-data" | grep -o '@[A-Z0-9_]*@' || true)
    [[ -z $left ]] || fail "placeholders the test does not fill are active in $user_data: $left"
    printf 'instance-id: %s\n' "$3" >"$seed/meta-data"
}

root=$T/rootfs
fresh_image "$root"
deb_in_node=/root/$(basename "$deb")
cp "$deb" "$root$deb_in_node"

# The shim the shipped user-data declares (spin-v2, handler spin): the node's own
# containerd-shim-runc-v2 under the name the handler's runtime_type gives, so that it really runs
# containers.
distro_serve_shims "$root" spin
distro_busybox_box "$root"
distro_count_containerd_starts "$root"

seed=$root/var/lib/cloud/seed/nocloud
write_seed "$root" "$deb_in_node" shimkeeper-cloud-init-test

boot_node "$root"
starts() { boot_run sh -c 'wc -l </run/containerd-starts'; }
run_through_shim() { distro_run_through_shim /var/lib/shimkeeper/bin/containerd-shim-spin-v2 "$1"; }
cloud_init_report() {
    echo
    echo "--- cloud-init status --long:"
    boot_run cloud-init status --long 2>&1 || true
    echo "--- /var/log/cloud-init-output.log (last 40 lines):"
    tail -n 40 "$root/var/log/cloud-init-output.log" 2>&1 || true
    echo "--- WARNING/ERROR lines of /var/log/cloud-init.log:"
    grep -E 'WARNING|ERROR|Traceback' "$root/var/log/cloud-init.log" 2>&1 | tail -n 20 || true
}
cloud_init_units_succeeded() {
    local unit state
    for unit in cloud-init-local cloud-init cloud-config cloud-final; do
        state=$(boot_run systemctl show -p ActiveState --value "$unit.service")
        state+=/$(boot_run systemctl show -p Result --value "$unit.service")
        [[ $state == active/success ]] || fail "$unit.service is '$state':" \
            "$(boot_run journalctl -u "$unit.service" --no-pager | tail -n 15)"
    done
}

# --- 1. first boot: cloud-init done, from the NoCloud seed.
boot_run timeout 300 cloud-init status --wait >"$T/ci-status.out" 2>&1 || true
grep -qx 'status: done' "$T/ci-status.out" ||
    fail "cloud-init did not finish with done: $(cat "$T/ci-status.out")" "$(cloud_init_report)"
boot_run cloud-init status --long >"$T/ci-long.out" 2>&1 || true
grep -q 'DataSourceNoCloud' "$T/ci-long.out" ||
    fail "cloud-init's datasource is not NoCloud: $(cat "$T/ci-long.out")"
cloud_init_units_succeeded
# The user-data is valid for the node's own cloud-init, but for `locale: false` (see the file).
boot_run cloud-init schema --system >"$T/schema.out" 2>&1 || true
errors=$(sed -n 's/^Cloud config schema errors: //p' "$T/schema.out" |
    sed -e "s/locale: False is not of type 'string'//" -e 's/^, //' -e 's/, $//')
[[ -z $errors ]] || fail "cloud-init's schema refuses the user-data: $errors"

# --- 2. what the user-data left: the daemon running, the shim installed through one restart.
[[ "$(boot_run systemctl is-enabled shimkeeper)" == enabled ]] || fail "shimkeeper.service is not enabled"
[[ "$(boot_run systemctl is-active shimkeeper)" == active ]] ||
    fail "shimkeeper.service is $(boot_run systemctl is-active shimkeeper):" \
        "$(boot_run journalctl -u shimkeeper --no-pager | tail -20)"
# Line 1: containerd's start at boot; line 2: the one restart that loaded the shim.
(($(starts) == 2)) || fail "containerd.service started $(starts) times, expected at boot and once more:" \
    "$(boot_run journalctl -u containerd -u shimkeeper --no-pager | grep -iE 'start|stop' | tail -20)"
boot_run shimkeeper status >"$T/status.out" 2>&1 || true
grep -q "handler spin: registered -> /var/lib/shimkeeper/bin/containerd-shim-spin-v2" "$T/status.out" ||
    fail "the running containerd's CRI does not list spin at the installed shim: $(cat "$T/status.out")"
# The restart was shimkeeper's (RestartUnit on the system bus, its only way to restart a unit).
grep -qE '^Last transaction: .* committed .*, 1 containerd restart\(s\)\)' "$T/status.out" ||
    fail "shimkeeper status reports no committed transaction with one restart: $(cat "$T/status.out")"
out=$(run_through_shim c1) || fail "ctr run through the installed shim failed: $out"
[[ $out == "hello from c1" ]] || fail "the container printed: $out"
(($(sk_requests_for /spin.tar.gz) == 1)) ||
    fail "the shim was downloaded $(sk_requests_for /spin.tar.gz) times, expected once"
grep -q 'Setting up shimkeeper' "$root/var/log/cloud-init-output.log" ||
    fail "the package install is not in cloud-init's output: $(cloud_init_report)"
# The apply's one-line result (it finds nothing to do when the daemon converged first).
applies() { grep -cE '^(Committed generation|Nothing to do)' "$root/var/log/cloud-init-output.log" || true; }
(($(applies) == 1)) ||
    fail "cloud-init's output shows $(applies) results of shimkeeper apply: $(cloud_init_report)"

# --- 3. the next boot of the same instance: no second run, the daemon back, the shim working.
boot_poweroff
boot_node "$root"
boot_run timeout 300 cloud-init status --wait >"$T/ci-status2.out" 2>&1 || true
grep -qx 'status: done' "$T/ci-status2.out" ||
    fail "on the second boot cloud-init says: $(cat "$T/ci-status2.out")" "$(cloud_init_report)"
cloud_init_units_succeeded
(($(applies) == 1)) || fail "the second boot ran the user-data's commands again ($(applies) applies)"
[[ "$(boot_run systemctl is-active shimkeeper)" == active ]] ||
    fail "after a reboot shimkeeper.service is $(boot_run systemctl is-active shimkeeper)"
# Active means its first reconcile is done (Type=notify): a converged node boots without a restart.
(($(starts) == 1)) || fail "the second boot started containerd $(starts) times, expected once"
out=$(run_through_shim c2) || fail "after a reboot, ctr run through the shim failed: $out"
(($(sk_requests_for /spin.tar.gz) == 1)) || fail "the reboot downloaded the shim again"

# --- 4. a new instance whose user-data names a wrong sha256: cloud-init says error, its output
# says why, and the node keeps the shim it had.
boot_poweroff
wrong=$(printf 'other' | sha256sum | cut -d' ' -f1)
sed -i "s|^      sha256 = .*|      sha256 = \"$wrong\"|" "$seed/user-data"
printf 'instance-id: shimkeeper-cloud-init-test-2\n' >"$seed/meta-data"
boot_node "$root"
boot_run timeout 300 cloud-init status --wait >"$T/ci-status3.out" 2>&1 || true
grep -qx 'status: error' "$T/ci-status3.out" ||
    fail "a user-data whose apply fails left cloud-init's status at: $(cat "$T/ci-status3.out")" \
        "$(cloud_init_report)"
grep -qF "checksum mismatch for spin-v2 from $SERVER_URL/spin.tar.gz: expected sha256 $wrong" \
    "$root/var/log/cloud-init-output.log" ||
    fail "cloud-init's output does not say the checksum was wrong: $(cloud_init_report)"
boot_run shimkeeper status >"$T/status3.out" 2>&1 || true
grep -q "handler spin: registered -> /var/lib/shimkeeper/bin/containerd-shim-spin-v2" "$T/status3.out" ||
    fail "after the failed apply the node lost the spin handler: $(cat "$T/status3.out")"
out=$(run_through_shim c3) || fail "after the failed apply, ctr run through the shim failed: $out"
boot_poweroff

# --- 5. a fresh image whose apt sources are a flat repository on the host holding the .deb (its
# dependencies are in the image): the user-data names the package, and the first boot runs
# apt-get update and installs it from there.
repo=$T/artifacts/apt
mkdir -p "$repo"
cp "$deb" "$repo/"
(cd "$repo" && dpkg-scanpackages --multiversion . /dev/null) >"$repo/Packages" 2>"$T/scan.err" ||
    fail "dpkg-scanpackages failed: $(cat "$T/scan.err")"
printf 'Origin: shimkeeper-test\nDate: %s\nSHA256:\n %s %s Packages\n' \
    "$(date -Ru)" "$(sha256_of "$repo/Packages")" "$(stat -c %s "$repo/Packages")" >"$repo/Release"
root=$T/rootfs-apt
fresh_image "$root"
# trusted=yes: the test's repository is unsigned (the shipped user-data shows a signed one).
printf 'deb [trusted=yes] %s/apt ./\n' "$SERVER_URL" >"$root/etc/apt/sources.list"
write_seed "$root" shimkeeper shimkeeper-cloud-init-apt
boot_node "$root"
boot_run timeout 300 cloud-init status --wait >"$T/ci-status5.out" 2>&1 || true
grep -qx 'status: done' "$T/ci-status5.out" ||
    fail "installing the package by name, cloud-init says: $(cat "$T/ci-status5.out")" "$(cloud_init_report)"
grep -qE "^Get:[0-9]+ $SERVER_URL/apt \./ shimkeeper " "$root/var/log/cloud-init-output.log" ||
    fail "the package did not come from the repository: $(cloud_init_report)"
[[ "$(boot_run systemctl is-active shimkeeper)" == active ]] ||
    fail "installed from the repository, shimkeeper.service is $(boot_run systemctl is-active shimkeeper)"
boot_run shimkeeper status >"$T/status5.out" 2>&1 || true
grep -q "handler spin: registered -> /var/lib/shimkeeper/bin/containerd-shim-spin-v2" "$T/status5.out" ||
    fail "installed from the repository, CRI does not list spin: $(cat "$T/status5.out")"
boot_poweroff
echo "ok: the NoCloud user-data installed the package (a path, or a name from the image's apt" \
    "sources), converged once through the system bus and left the daemon running across a" \
    "reboot; a failed apply is cloud-init's error"
