# shellcheck shell=bash
# A real node on a development machine: a private systemd user manager driving Debian's real
# containerd, for tests/node/*.sh and scripts/demo. Recipe: shared/DESIGN.md, "A real node on a
# development machine". Source this file, then:
#
#   node_reexec_in_namespace "$@"   # root only (else exit 77); re-execs into a private mount ns
#   node_up "$dir"                  # dbus-daemon + systemd --user + containerd.service; registers
#                                   # node_down on EXIT (the folder is kept when the script fails)
#
# Exports after node_up:
#   NODE_DIR            the instance folder
#   NODE_SOCKET         containerd's gRPC socket (a real host path)
#   NODE_UNIT           containerd.service (a unit of the private user manager)
#   NODE_CONFIG         containerd's config.toml (a real host path)
#   NODE_AGENT_CONFIG   shimkeeper's agent config for this node: run `shimkeeper -c "$NODE_AGENT_CONFIG"`
#   NODE_STORE_DIR      shimkeeper's store folder, NODE_SHIMS_D the shims.d drop-in folder
#   NODE_CGROUP_PARENT  cgroup parent for ctr/CRI sandboxes; removed by node_down
#   NODE_PAUSE_IMAGE    the sandbox image name in containerd's config (see node_pause_image)
#   XDG_RUNTIME_DIR, XDG_CONFIG_HOME, DBUS_SESSION_BUS_ADDRESS for `systemctl --user` and sd-bus
#
# How paths meet `--root`: containerd here runs on the REAL filesystem, so every path shimkeeper
# writes into its config (runtime_type = absolute shim path on containerd 1.6) must be a real host
# path. The node tests therefore run shimkeeper WITHOUT --root; the agent config names absolute
# paths inside NODE_DIR for [containerd] config_path and socket and for [store] dir. `--root` stays
# for `bake` and for offline tests, where nothing runs what was written.

k_node_pause_image="localhost/shimkeeper-pause:1"

node_log() { printf '[node] %s\n' "$*" >&2; }

node_skip() {
    printf 'SKIP: %s\n' "$*" >&2
    exit 77
}

# node_wait_for SECONDS CMD...: polls CMD until it succeeds or the deadline passes.
node_wait_for() {
    local seconds=$1
    shift
    local deadline=$((SECONDS + seconds))
    while ! "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            return 1
        fi
        sleep 0.05
    done
}

node_reexec_in_namespace() {
    if ((EUID != 0)); then
        node_skip "real-node tests need root (a private mount namespace, systemd, containerd)"
    fi
    local tool
    for tool in unshare dbus-daemon /lib/systemd/systemd systemctl containerd ctr \
        containerd-shim-runc-v2 runc; do
        command -v "$tool" >/dev/null || node_skip "$tool is not installed"
    done
    if [[ ${SHIMKEEPER_NODE_NAMESPACE:-} != "$$" ]]; then
        # exec keeps our pid, so the marker names the process that owns the namespace: a child
        # test script started from inside gets its own namespace again.
        local script
        script=$(readlink -f "${BASH_SOURCE[-1]}")
        SHIMKEEPER_NODE_NAMESPACE=$$ exec unshare -m --propagation private -- \
            bash "$script" "$@"
    fi
    # systemd --user refuses to manage units unless the machine looks booted with systemd.
    mount -t tmpfs -o mode=0755 tmpfs /run/systemd || node_skip "cannot mount tmpfs on /run/systemd"
    mkdir -p /run/systemd/system
}

# node_write_containerd_config DIR: Debian's default config with every path moved into DIR.
node_write_containerd_config() {
    local dir=$1
    mkdir -p "$dir/etc/containerd" "$dir/opt/cni/bin" "$dir/etc/cni/net.d" "$dir/opt/containerd"
    containerd config default | awk -v dir="$dir" -v pause="$NODE_PAUSE_IMAGE" '
        /^\[/ { section = $0 }
        /^root = /  { print "root = \"" dir "/var/lib/containerd\""; next }
        /^state = / { print "state = \"" dir "/run/containerd\""; next }
        section == "[grpc]"  && /^  address = / {
            print "  address = \"" dir "/containerd/containerd.sock\""; next }
        section == "[ttrpc]" && /^  address = / {
            print "  address = \"" dir "/containerd/containerd.sock.ttrpc\""; next }
        section == "[debug]" && /^  address = / {
            print "  address = \"" dir "/containerd/debug.sock\""; next }
        /^ *restrict_oom_score_adj = / { sub(/false/, "true"); print; next }
        /^ *sandbox_image = / { sub(/".*"/, "\"" pause "\""); print; next }
        { gsub("\"/opt/containerd\"", "\"" dir "/opt/containerd\"")
          gsub("\"/opt/cni/bin\"", "\"" dir "/opt/cni/bin\"")
          gsub("\"/etc/cni/net.d\"", "\"" dir "/etc/cni/net.d\"")
          print }' >"$dir/etc/containerd/config.toml"
}

node_write_containerd_unit() {
    local unit_dir=$XDG_CONFIG_HOME/systemd/user
    mkdir -p "$unit_dir"
    cat >"$unit_dir/$NODE_UNIT" <<EOF
[Unit]
Description=containerd of the shimkeeper test node $NODE_DIR

[Service]
Type=notify
ExecStart=/usr/bin/containerd --config $NODE_CONFIG
KillMode=process
Delegate=yes
Restart=always
RestartSec=100ms
LimitNOFILE=infinity
TasksMax=infinity
EOF
}

node_write_agent_config() {
    mkdir -p "$NODE_DIR/etc/shimkeeper/shims.d" "$NODE_STORE_DIR"
    cat >"$NODE_AGENT_CONFIG" <<EOF
# Written by tests/support/node_harness.sh: absolute host paths, use without --root.
[containerd]
config_path = "$NODE_CONFIG"
unit = "$NODE_UNIT"
socket = "$NODE_SOCKET"
binary = "/usr/bin/containerd"

[systemd]
bus = "user"

[store]
dir = "$NODE_STORE_DIR"
EOF
}

node_up() {
    local dir
    dir=$(readlink -f "$1")
    mkdir -p "$dir"
    export NODE_DIR=$dir
    export NODE_UNIT=containerd.service
    export NODE_SOCKET=$dir/containerd/containerd.sock
    export NODE_CONFIG=$dir/etc/containerd/config.toml
    export NODE_AGENT_CONFIG=$dir/etc/shimkeeper/shimkeeper.toml
    export NODE_STORE_DIR=$dir/var/lib/shimkeeper
    export NODE_SHIMS_D=$dir/etc/shimkeeper/shims.d
    export NODE_CGROUP_PARENT=/shimkeeper-pods-${dir##*/}
    export NODE_PAUSE_IMAGE=$k_node_pause_image
    export XDG_RUNTIME_DIR=$dir/xdg-run
    export XDG_CONFIG_HOME=$dir/xdg-config
    export DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus
    if ((${#NODE_SOCKET} > 100)); then
        node_log "socket path too long for a unix socket: $NODE_SOCKET (use a shorter folder)"
        return 1
    fi
    mkdir -p -m 0700 "$XDG_RUNTIME_DIR"
    mkdir -p "$dir/containerd" "$dir/log"
    trap node_down EXIT

    dbus-daemon --session --address="$DBUS_SESSION_BUS_ADDRESS" --nofork --print-address \
        >"$dir/log/dbus.address" 2>"$dir/log/dbus.log" &
    NODE_DBUS_PID=$!
    node_wait_for 10 test -S "$XDG_RUNTIME_DIR/bus" || {
        node_log "dbus-daemon did not create $XDG_RUNTIME_DIR/bus; see $dir/log/dbus.log"
        return 1
    }
    mapfile -t NODE_MANAGER_CGROUPS < <(node_cgroup_dirs "shimkeeper-node-${dir##*/}")
    node_start_systemd
    node_wait_for 20 node_manager_ready_or_dead && node_manager_ready || {
        node_log "systemd --user did not come up; see $dir/log/systemd.log"
        return 1
    }

    node_write_containerd_config "$dir"
    node_write_containerd_unit
    node_write_agent_config
    systemctl --user daemon-reload
    systemctl --user start "$NODE_UNIT" || {
        node_log "containerd did not start: $(node_journal_hint)"
        return 1
    }
    node_wait_active 20 || return 1
    node_log "up: $NODE_DIR (containerd pid $(node_unit_prop MainPID))"
}

node_manager_ready_or_dead() {
    node_manager_ready || node_pid_gone "$NODE_SYSTEMD_PID"
}

node_manager_ready() {
    local state
    state=$(systemctl --user is-system-running 2>/dev/null)
    [[ $state == running || $state == degraded ]]
}

node_journal_hint() {
    printf 'systemctl --user status %s: %s' "$NODE_UNIT" \
        "$(systemctl --user status --no-pager "$NODE_UNIT" 2>&1 | tail -n 5)"
}

# node_unit_prop NAME [UNIT]: one property of containerd.service (or UNIT) as systemd reports it.
node_unit_prop() {
    systemctl --user show -p "$1" --value "${2:-$NODE_UNIT}"
}

node_containerd_answers() {
    ctr -a "$NODE_SOCKET" version >/dev/null 2>&1
}

node_unit_is_active() {
    [[ $(node_unit_prop ActiveState) == active ]]
}

# node_wait_active [SECONDS]: containerd.service is active AND its socket answers.
node_wait_active() {
    local seconds=${1:-20}
    if ! node_wait_for "$seconds" node_unit_is_active ||
        ! node_wait_for "$seconds" node_containerd_answers; then
        node_log "containerd is not active and answering after ${seconds}s: $(node_journal_hint)"
        return 1
    fi
}

# node_cgroup_dirs NAME: for every cgroup hierarchy, the folder NAME below our own cgroup there.
node_cgroup_dirs() {
    local ctrls path mnt
    while IFS=: read -r _ ctrls path; do
        if [[ -z $ctrls ]]; then
            mnt=/sys/fs/cgroup/unified
            [[ -d $mnt ]] || mnt=/sys/fs/cgroup
        else
            mnt=/sys/fs/cgroup/${ctrls#name=}
        fi
        [[ -f $mnt/cgroup.procs ]] && printf '%s\n' "${mnt}${path%/}/$1"
    done </proc/self/cgroup
}

# Runs the user manager in a cgroup of its own: started in the root cgroup, systemd would
# adopt and move every process there (the machine's own PID 1 included) into its init.scope.
node_start_systemd() {
    local dir
    (
        for dir in "${NODE_MANAGER_CGROUPS[@]}"; do
            mkdir -p "$dir" || exit 1
            if [[ -f $dir/cpuset.cpus ]]; then # a v1 cpuset starts empty and admits no task
                cat "$dir/../cpuset.cpus" >"$dir/cpuset.cpus"
                cat "$dir/../cpuset.mems" >"$dir/cpuset.mems"
            fi
            echo "$BASHPID" >"$dir/cgroup.procs" || exit 1
        done
        exec /lib/systemd/systemd --user
    ) >"$NODE_DIR/log/systemd.log" 2>&1 &
    NODE_SYSTEMD_PID=$!
}

# Stops every container task of this containerd and any shim it left behind (KillMode=process
# keeps shims running across stops, on purpose, like on a real node).
node_kill_tasks() {
    local ns id
    if node_containerd_answers; then
        for ns in $(ctr -a "$NODE_SOCKET" namespaces ls -q 2>/dev/null); do
            for id in $(ctr -a "$NODE_SOCKET" -n "$ns" tasks ls -q 2>/dev/null); do
                ctr -a "$NODE_SOCKET" -n "$ns" tasks kill -s KILL "$id" >/dev/null 2>&1
                ctr -a "$NODE_SOCKET" -n "$ns" tasks delete -f "$id" >/dev/null 2>&1
            done
            for id in $(ctr -a "$NODE_SOCKET" -n "$ns" containers ls -q 2>/dev/null); do
                ctr -a "$NODE_SOCKET" -n "$ns" containers delete "$id" >/dev/null 2>&1
            done
        done
    fi
    # A shim's command line names the socket of the containerd that started it.
    pkill -KILL -f -- "-address $NODE_SOCKET( |$)" 2>/dev/null || true
}

# Removes the cgroup trees of the manager and of our containers, innermost first.
node_remove_cgroups() {
    local root
    for root in /sys/fs/cgroup/*/"${NODE_CGROUP_PARENT#/}" \
        /sys/fs/cgroup/"${NODE_CGROUP_PARENT#/}" "${NODE_MANAGER_CGROUPS[@]}"; do
        [[ -d $root ]] || continue
        find "$root" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
}

node_down() {
    local status=$?
    trap - EXIT
    set +e # tear down as much as possible whatever fails
    if [[ -n ${NODE_SYSTEMD_PID:-} ]]; then
        node_kill_tasks
        systemctl --user stop "$NODE_UNIT" >/dev/null 2>&1 || true
        node_kill_tasks
        systemctl --user exit >/dev/null 2>&1 || kill "$NODE_SYSTEMD_PID" 2>/dev/null
        node_wait_for 10 node_pid_gone "$NODE_SYSTEMD_PID" || kill -KILL "$NODE_SYSTEMD_PID"
        wait "$NODE_SYSTEMD_PID" 2>/dev/null
    fi
    if [[ -n ${NODE_DBUS_PID:-} ]]; then
        kill "$NODE_DBUS_PID" 2>/dev/null
        wait "$NODE_DBUS_PID" 2>/dev/null
    fi
    node_remove_cgroups
    mountpoint -q /run/systemd && umount /run/systemd
    if [[ -n ${NODE_DIR:-} ]]; then
        if ((status == 0)) && [[ -z ${NODE_KEEP:-} ]]; then
            umount -R "$NODE_DIR" 2>/dev/null
            rm -rf "$NODE_DIR"
        else
            node_log "kept $NODE_DIR for inspection (exit status $status)"
        fi
    fi
    exit "$status"
}

node_pid_gone() {
    ! kill -0 "$1" 2>/dev/null
}

# shellcheck source=tests/support/node_images.sh
source "$(dirname "${BASH_SOURCE[0]}")/node_images.sh"
