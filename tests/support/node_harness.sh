# shellcheck shell=bash
# A real node on a development machine: a private systemd user manager driving a real containerd,
# for tests/node/*.sh and scripts/demo. Recipe: shared/DESIGN.md, "A real node on a development
# machine". Source this file, then:
#
#   node_reexec_in_namespace "$@"   # root only (else exit 77); re-execs into a private mount ns
#   node_up "$dir"                  # dbus-daemon + systemd --user + containerd.service; registers
#                                   # node_down on EXIT (the folder is kept when the script fails)
#
# Helpers: node_unit_prop NAME, node_wait_active [SECONDS], node_unit_dropin NAME [TEXT],
# node_pause_image, node_busybox_rootfs DIR, node_cri_client ARGS..., node_wait_for SECONDS CMD...
#
# The containerd line is SHIMKEEPER_CONTAINERD_LINE: 1.6 (default: Debian's /usr/bin/containerd),
# or the suffix of a tests/peers/containerd-<line> folder (1.7, 2.2, 2): containerd, ctr and
# containerd-shim-runc-v2 built by scripts/build-peers (skipped when that build is not cached).
# Each line runs with its own `containerd config default`, root, state and socket; `containerd`,
# `ctr` and `containerd-shim-runc-v2` on PATH (ours and the unit's) are that line's.
#
# With common.sh: call sk_init first, then `node_up "$T/node"`; node_down runs sk_init's cleanup
# after the node is down.
#
# Exports after node_up:
#   NODE_CONTAINERD_LINE   1.6, 1.7, 2.2 or 2 (set by node_reexec_in_namespace, as are the next 4)
#   NODE_CONTAINERD_BIN    the folder holding that line's containerd, ctr, containerd-shim-runc-v2
#   NODE_CONTAINERD        that line's containerd binary; NODE_SHIM_RUNC its runc shim
#   NODE_CONTAINERD_VERSION  e.g. 2.4.2, from `containerd --version`
#   NODE_DIR            the instance folder
#   NODE_SOCKET         containerd's gRPC socket (a real host path)
#   NODE_UNIT           containerd.service (a unit of the private user manager)
#   NODE_CONFIG         containerd's config.toml (a real host path)
#   NODE_CONFIG_DIR     its folder, with conf.d/ (which 2.x's default config imports)
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

# node_select_line: points NODE_CONTAINERD* and PATH at the line SHIMKEEPER_CONTAINERD_LINE names.
node_select_line() {
    export NODE_CONTAINERD_LINE=${SHIMKEEPER_CONTAINERD_LINE:-1.6}
    if [[ $NODE_CONTAINERD_LINE == 1.6 ]]; then
        NODE_CONTAINERD_BIN=/usr/bin
    else
        local line=$NODE_CONTAINERD_LINE
        [[ -d $_node_support/../peers/containerd-$line ]] ||
            node_skip "SHIMKEEPER_CONTAINERD_LINE=$line: no tests/peers/containerd-$line"
        NODE_CONTAINERD_BIN=$("$_node_support/../../scripts/build-peers" --dir "$line")
        [[ -x $NODE_CONTAINERD_BIN/containerd ]] ||
            node_skip "containerd $line is not built: run scripts/build-peers $line"
        # Found before Debian's in /usr/bin, by us and by the unit (see node_write_containerd_unit).
        export PATH=$NODE_CONTAINERD_BIN:$PATH
    fi
    export NODE_CONTAINERD_BIN NODE_CONTAINERD=$NODE_CONTAINERD_BIN/containerd
    export NODE_SHIM_RUNC=$NODE_CONTAINERD_BIN/containerd-shim-runc-v2
    [[ -x $NODE_CONTAINERD ]] || node_skip "$NODE_CONTAINERD is not installed"
    NODE_CONTAINERD_VERSION=$("$NODE_CONTAINERD" --version | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' |
        head -n 1)
    export NODE_CONTAINERD_VERSION
}

node_reexec_in_namespace() {
    if ((EUID != 0)); then
        node_skip "real-node tests need root (a private mount namespace, systemd, containerd)"
    fi
    node_select_line
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
    # Name the command that failed: `set -e` alone exits silently.
    set -E
    trap 'node_log "failed (status $?) at ${BASH_SOURCE[0]}:$LINENO: $BASH_COMMAND"' ERR
    # systemd --user refuses to manage units unless the machine looks booted with systemd.
    mount -t tmpfs -o mode=0755 tmpfs /run/systemd || node_skip "cannot mount tmpfs on /run/systemd"
    mkdir -p /run/systemd/system
    # runc's root (/run/containerd/runc/NAMESPACE), ctr's fifos and the shims' sockets live under
    # /run/containerd whatever containerd's state folder is: without a folder of their own, two
    # scenarios side by side that both run a container called ctr-demo collide in runc ("container
    # with given ID already exists").
    mkdir -p /run/containerd
    mount -t tmpfs -o mode=0711 tmpfs /run/containerd || node_skip "cannot mount tmpfs on /run/containerd"
}

node_up() {
    local dir
    dir=$(readlink -f "$1")
    mkdir -p "$dir"
    export NODE_DIR=$dir
    export NODE_UNIT=containerd.service
    export NODE_SOCKET=$dir/containerd/containerd.sock
    export NODE_CONFIG=$dir/etc/containerd/config.toml
    export NODE_CONFIG_DIR=$dir/etc/containerd
    export NODE_AGENT_CONFIG=$dir/etc/shimkeeper/shimkeeper.toml
    export NODE_STORE_DIR=$dir/var/lib/shimkeeper
    export NODE_SHIMS_D=$dir/etc/shimkeeper/shims.d
    # Named after the node's folder and its parent (the test's own temporary folder): scenarios
    # that run side by side each name their node "node", and a shared cgroup would let one
    # manager's stop of containerd.service kill the other's containerd.
    local cgroup_name=${dir%/*}
    cgroup_name=${cgroup_name##*/}-${dir##*/}
    export NODE_CGROUP_PARENT=/shimkeeper-pods-$cgroup_name
    export NODE_PAUSE_IMAGE=$k_node_pause_image
    export XDG_RUNTIME_DIR=$dir/xdg-run
    export XDG_CONFIG_HOME=$dir/xdg-config
    export DBUS_SESSION_BUS_ADDRESS=unix:path=$XDG_RUNTIME_DIR/bus
    if ((${#NODE_SOCKET} > 100)); then
        node_log "socket path too long for a unix socket: $NODE_SOCKET (use a shorter folder)"
        return 1
    fi
    mkdir -p "$XDG_RUNTIME_DIR"
    chmod 0700 "$XDG_RUNTIME_DIR"
    mkdir -p "$dir/containerd" "$dir/log"
    # An EXIT trap set before (common.sh's sk_init) runs after the node is down.
    NODE_PREVIOUS_EXIT_TRAP=$(trap -p EXIT | sed -n "s/^trap -- '\(.*\)' EXIT\$/\1/p")
    [[ $NODE_PREVIOUS_EXIT_TRAP == node_down ]] && NODE_PREVIOUS_EXIT_TRAP=""
    trap node_down EXIT

    dbus-daemon --session --address="$DBUS_SESSION_BUS_ADDRESS" --nofork --print-address \
        >"$dir/log/dbus.address" 2>"$dir/log/dbus.log" &
    NODE_DBUS_PID=$!
    node_wait_for 10 test -S "$XDG_RUNTIME_DIR/bus" || {
        node_log "dbus-daemon did not create $XDG_RUNTIME_DIR/bus; see $dir/log/dbus.log"
        return 1
    }
    mapfile -t NODE_MANAGER_CGROUPS < <(node_cgroup_dirs "shimkeeper-node-$cgroup_name")
    node_refuse_busy_cgroups || return 1
    node_start_systemd
    if ! node_wait_for 20 node_manager_ready_or_dead || ! node_manager_ready; then
        node_log "systemd --user did not come up; see $dir/log/systemd.log"
        return 1
    fi

    node_write_containerd_config "$dir"
    node_write_containerd_unit
    node_write_agent_config
    systemctl --user daemon-reload
    systemctl --user start "$NODE_UNIT" || {
        node_log "containerd did not start: $(node_journal_hint)"
        return 1
    }
    node_wait_active 20 || return 1
    node_log "up: $NODE_DIR (containerd $NODE_CONTAINERD_VERSION, line $NODE_CONTAINERD_LINE," \
        "pid $(node_unit_prop MainPID))"
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
    ctr -a "$NODE_SOCKET" --connect-timeout 1s version >/dev/null 2>&1
}

node_unit_is_active() {
    [[ $(node_unit_prop ActiveState 2>/dev/null) == active ]]
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

# node_unit_dropin NAME [TEXT]: adds (TEXT given) or removes the drop-in NAME.conf of
# containerd.service and reloads the manager, e.g. to make containerd's start fail on purpose.
node_unit_dropin() {
    local dir=$XDG_CONFIG_HOME/systemd/user/$NODE_UNIT.d
    if (($# > 1)); then
        mkdir -p "$dir"
        printf '%s\n' "$2" >"$dir/$1.conf"
    else
        rm -f "$dir/$1.conf"
    fi
    systemctl --user daemon-reload
}

# node_agent_unit UNIT WATCHDOG_SEC START_TIMEOUT_SEC LOG RUN_ARGS...: a user unit UNIT that runs
# `shimkeeper -c $NODE_AGENT_CONFIG RUN_ARGS...` the way units/shimkeeper.service does
# (Type=notify, WatchdogSec, Restart=on-failure) beside this node's containerd; output appended
# to LOG ("" leaves it to the manager). The manager is reloaded; starting it is the caller's.
node_agent_unit() {
    local unit=$1 watchdog=$2 start_timeout=$3 log=$4
    shift 4
    {
        printf '[Unit]\nDescription=shimkeeper run for the test node %s\n' "$NODE_DIR"
        printf 'After=%s\nWants=%s\n\n[Service]\nType=notify\n' "$NODE_UNIT" "$NODE_UNIT"
        printf 'ExecStart=%s -c %s %s\n' "${SHIMKEEPER:?}" "$NODE_AGENT_CONFIG" "$*"
        printf 'WatchdogSec=%ss\nRestart=on-failure\nRestartSec=1s\n' "$watchdog"
        printf 'TimeoutStartSec=%ss\n' "$start_timeout"
        if [[ -n $log ]]; then
            printf 'StandardOutput=append:%s\nStandardError=append:%s\n' "$log" "$log"
        fi
    } >"$XDG_CONFIG_HOME/systemd/user/$unit"
    systemctl --user daemon-reload
}

# node_cri_client ARGS...: the cri-client test tool (CRI calls as a kubelet makes them) against
# this node's containerd.
node_cri_client() {
    local tool=${SHIMKEEPER_BUILD_DIR:?}/tests/support/cri-client
    [[ -x $tool ]] || node_skip "$tool is not built (cmake --build ... --target cri_client)"
    "$tool" --socket "$NODE_SOCKET" "$@"
}

_node_support=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=tests/support/node_config.sh
source "$_node_support/node_config.sh"
# shellcheck source=tests/support/node_processes.sh
source "$_node_support/node_processes.sh"
# shellcheck source=tests/support/node_images.sh
source "$_node_support/node_images.sh"

# node_pod_pause_pid POD_ID: the pid of the pause process of a CRI sandbox (found through its
# cgroup, which names the sandbox id); fails when there is none (yet). The pause image's shell and
# its sleep child both match, and pids wrap (pid_max is 32768 on some hosts), so the sandbox's init
# is the match whose parent is outside the sandbox (the shim), not the lowest pid.
node_pod_pause_pid() {
    local pod=$1 pid parent
    for pid in $(pgrep -f 'sleep 2147483647'); do
        grep -q "${pod:0:12}" "/proc/$pid/cgroup" 2>/dev/null || continue
        parent=$(ps -o ppid= -p "$pid" | tr -d ' ')
        [[ -n "$parent" ]] || continue
        grep -q "${pod:0:12}" "/proc/$parent/cgroup" 2>/dev/null && continue
        echo "$pid"
        return 0
    done
    return 1
}

# node_pod_shim_exe POD_ID: the executable of the shim process that runs sandbox POD_ID (the
# pause process's parent), waiting up to 10 s for the pause process to appear.
node_pod_shim_exe() {
    local pod=$1 pause
    node_wait_for 10 node_pod_pause_pid "$pod" || {
        node_log "no pause process of sandbox $pod appeared"
        return 1
    }
    pause=$(node_pod_pause_pid "$pod")
    readlink "/proc/$(ps -o ppid= -p "$pause" | tr -d ' ')/exe"
}
