# shellcheck shell=bash
# The test node's processes and cgroups: starting the user manager in a cgroup of its own, and
# tearing everything down again. Sourced by node_harness.sh.

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

# Fails, naming it, when a cgroup the manager would run in already holds processes: another node's
# manager, whose units would then share this one's cgroups.
node_refuse_busy_cgroups() {
    local procs
    # cgroupfs reports every file as empty to stat, so read them.
    while IFS= read -r procs; do
        if [[ -n $(<"$procs") ]]; then
            node_log "cgroup ${procs%/*} already has processes (another test node?); refusing to share it"
            # They are the other node's: node_down leaves them alone.
            NODE_MANAGER_CGROUPS=()
            NODE_CGROUP_PARENT=
            return 1
        fi
    done < <(find "${NODE_MANAGER_CGROUPS[@]}" -name cgroup.procs 2>/dev/null || true)
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
    if node_unit_is_active && node_containerd_answers; then
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

# node__pod_cgroup_roots: our containers' cgroup trees, one a line, in every hierarchy (v1's
# controllers and the v2 tree) whether it exists or not.
node__pod_cgroup_roots() {
    printf '%s\n' /sys/fs/cgroup/*/"${NODE_CGROUP_PARENT#/}" /sys/fs/cgroup/"${NODE_CGROUP_PARENT#/}"
}

# The processes in our containers' cgroups, one pid per line.
node__pod_pids() {
    local root
    for root in $(node__pod_cgroup_roots); do
        [[ -d $root ]] && find "$root" -name cgroup.procs -exec cat {} + 2>/dev/null
    done | sort -u
}
node__no_pod_pids() { [[ -z $(node__pod_pids) ]]; }

# Kills whatever still runs in our containers' cgroups: a sandbox whose shim went before its
# containerd killed the task (containerd stopped or not answering at the end) keeps running,
# reparented to init, past the test. Waits up to 5 s for them to go, so their cgroups can.
node_kill_pod_processes() {
    local pids
    [[ -n ${NODE_CGROUP_PARENT:-} ]] || return 0
    pids=$(node__pod_pids)
    [[ -n $pids ]] || return 0
    # shellcheck disable=SC2086 # one pid per word
    kill -KILL $pids 2>/dev/null
    node_wait_for 5 node__no_pod_pids || true
}

# Removes the cgroup trees of the manager and of our containers, innermost first.
node_remove_cgroups() {
    local root
    [[ -n ${NODE_CGROUP_PARENT:-} ]] || return 0
    for root in $(node__pod_cgroup_roots) "${NODE_MANAGER_CGROUPS[@]}"; do
        [[ -d $root ]] || continue
        find "$root" -depth -type d -exec rmdir {} + 2>/dev/null || true
    done
}

node_down() {
    local status=$?
    trap - EXIT ERR
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
    node_kill_pod_processes
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
    if [[ -n ${NODE_PREVIOUS_EXIT_TRAP:-} ]]; then
        (exit "$status") # the previous trap reads the test's status from $?
        eval "$NODE_PREVIOUS_EXIT_TRAP"
    fi
    exit "$status"
}

node_pid_gone() {
    ! kill -0 "$1" 2>/dev/null
}
