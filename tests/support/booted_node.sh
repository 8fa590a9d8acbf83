# shellcheck shell=bash
# Boots a Debian rootfs with systemd-nspawn: a real systemd as PID 1 with a real system bus,
# Debian's containerd.service under it. This machine has no systemd and no machined, so:
#   - nspawn runs with --keep-unit --register=no, started from a cgroup of its own in the v1
#     "systemd" hierarchy and in "unified" (else: "Failed to open system bus");
#   - commands run inside through nsenter into the container's PID 1 (the "leader");
#   - containers under its containerd need every capability, the keyring syscalls, and the v1
#     controllers remounted read-write from the host.
# Waiting is on conditions (systemctl is-system-running --wait, the leader's appearance, nspawn's
# exit), never a fixed sleep. boot_node installs an EXIT trap that powers the node off (killing
# it if it does not stop) and removes its cgroups, whatever way the test ends.
#
#   boot_node ROOTFS            # sets BOOT_LEADER; returns once the system is up
#   boot_run CMD...             # CMD inside, with the node's own environment
#   boot_poweroff               # systemctl poweroff, then waits for nspawn to exit

BOOT_PID=""
BOOT_LEADER=""
BOOT_CGROUP=""
BOOT_LOG=""

boot__cgroup_roots() {
    echo /sys/fs/cgroup/systemd /sys/fs/cgroup/unified
}

# boot__wait SECONDS CMD...: polls CMD every 0.1 s until it succeeds or SECONDS pass.
boot__wait() {
    local deadline=$((SECONDS + $1))
    shift
    until "$@"; do
        ((SECONDS < deadline)) || return 1
        sleep 0.1
    done
}

# boot__find_leader: the container's PID 1 is a descendant of nspawn whose command is systemd.
boot__find_leader() {
    local pid
    for pid in $(pgrep -P "$BOOT_PID") $(pgrep -P "$(pgrep -P "$BOOT_PID" | head -n1)" 2>/dev/null); do
        if [[ "$(cat "/proc/$pid/comm" 2>/dev/null)" == systemd ]]; then
            BOOT_LEADER=$pid
            return 0
        fi
    done
    return 1
}

boot_run() {
    nsenter -t "$BOOT_LEADER" -a -- /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin \
        LANG=C.UTF-8 HOME=/root "$@"
}

boot__system_up() {
    local state
    # A bound, not a pause: it returns as soon as boot is done (17-40 s here, cloud-final
    # included); 300 s leaves room for a machine loaded by parallel builds.
    state=$(boot_run timeout 300 systemctl is-system-running --wait 2>/dev/null) || true
    [[ $state == running || $state == degraded ]] || {
        echo "the node's systemd is '$state'; log: $BOOT_LOG" >&2
        return 1
    }
    if [[ $state == degraded ]]; then
        echo "note: the node is degraded: $(boot_run systemctl --failed --no-legend | tr '\n' ' ')" >&2
    fi
}

boot_node() {
    local root=$1 dir controller
    command -v systemd-nspawn >/dev/null || skip "systemd-nspawn is missing (systemd-container)"
    BOOT_CGROUP=shimkeeper-boot-$$
    BOOT_LOG=$T/boot.log
    for dir in $(boot__cgroup_roots); do
        [[ -d $dir ]] || skip "$dir is missing: this recipe needs cgroups v1 with a systemd hierarchy"
        mkdir -p "$dir/$BOOT_CGROUP"
    done
    trap boot__cleanup EXIT
    (
        for dir in $(boot__cgroup_roots); do
            echo "$BASHPID" >"$dir/$BOOT_CGROUP/cgroup.procs"
        done
        exec systemd-nspawn --quiet --boot --directory="$root" --register=no --keep-unit \
            --console=read-only --capability=all --system-call-filter=@keyring \
            --machine="sk-$$" </dev/null >"$BOOT_LOG" 2>&1
    ) &
    BOOT_PID=$!
    boot__wait 30 boot__find_leader || fail "no systemd inside nspawn after 30 s; log: $BOOT_LOG"
    boot__wait 30 test -S "/proc/$BOOT_LEADER/root/run/dbus/system_bus_socket" ||
        fail "the node's system bus did not come up; log: $BOOT_LOG"
    boot__system_up || fail "the node did not boot"
    # containerd's runc needs the v1 controllers writable (nspawn mounts them read-only).
    for controller in $(boot_run find /sys/fs/cgroup -mindepth 1 -maxdepth 1 -type d -printf '%f\n'); do
        nsenter -t "$BOOT_LEADER" -m mount -o remount,bind,rw "/sys/fs/cgroup/$controller" 2>/dev/null ||
            true
    done
}

boot_poweroff() {
    [[ -n $BOOT_PID ]] || return 0
    boot_run systemctl poweroff >/dev/null 2>&1 || true
    boot__wait 60 boot__exited || {
        echo "the node did not power off within 60 s: killing nspawn" >&2
        kill "$BOOT_PID" 2>/dev/null || true
        boot__wait 20 boot__exited || kill -9 "$BOOT_PID" 2>/dev/null || true
    }
    wait "$BOOT_PID" 2>/dev/null || true
    BOOT_PID=""
}

boot__exited() {
    ! kill -0 "$BOOT_PID" 2>/dev/null
}

boot__cleanup() {
    local rc=$? dir
    set +e
    boot_poweroff
    for dir in $(boot__cgroup_roots); do
        [[ -d $dir/$BOOT_CGROUP ]] && find "$dir/$BOOT_CGROUP" -depth -type d -exec rmdir {} \; 2>/dev/null
    done
    # common.sh's cleanup (temp folder, servers) with the test's exit code.
    (exit "$rc")
    sk__cleanup
}
