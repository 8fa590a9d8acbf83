# shellcheck shell=bash
# bench/rollout/cpu_groups.sh: the control plane and the nodes in CPU cgroups of equal weight.
#
# Why: in a cluster the API server, etcd and the coordinator run on machines of their own, and
# a thousand node agents never take their cores. Here all share two cores, and the kernel's fair
# scheduler weighs every runnable thread alike: when a Shim wakes the thousand agents at once
# (the start of a generation, every agent staging its download), kube-apiserver got well under
# 1% of the CPU (one nice-0 process beside 1000 agents of nice 0..19), its Lease writes took up
# to 10 s, and the leading coordinator lost its term, an artefact of sharing the machine that no
# priority level inside the API server can mend. With a group each, of equal weight, the control
# plane gets one core's worth whenever it wants it and lends it to the agents when it does not
# (the weights divide only what both want). BENCH_SHARED_CORES=1 keeps everything in one group,
# the figure before.
#
# cpu_groups_make: creates the groups (cgroup v1's cpu hierarchy, or v2's with the cpu
# controller) and sets CPU_GROUP_CONTROL_PLANE and CPU_GROUP_NODES to their folders; says why
# and leaves both empty when neither is usable. Empty groups of earlier runs are removed first.
# cpu_group_join DIR PID...: moves each process (all its threads) into the group.

cpu_groups__base() {
    if [[ -w /sys/fs/cgroup/cpu/cgroup.procs ]]; then
        echo /sys/fs/cgroup/cpu
    elif [[ -r /sys/fs/cgroup/cgroup.controllers ]] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
        echo /sys/fs/cgroup
    fi
}

cpu_groups_make() {
    # shellcheck disable=SC2034 # read by the bench that sources this
    CPU_GROUP_CONTROL_PLANE="" CPU_GROUP_NODES=""
    if [[ -n ${BENCH_SHARED_CORES:-} ]]; then
        echo "CPU groups: none (BENCH_SHARED_CORES): the control plane shares the cores with the agents"
        return 0
    fi
    local base dir group
    base=$(cpu_groups__base)
    if [[ -z $base ]]; then
        echo "CPU groups: none (no writable cpu cgroup hierarchy): the control plane shares the cores with the agents"
        return 0
    fi
    dir=$base/shimkeeper-bench
    mkdir -p "$dir"
    # Children first (-depth): a run's folder holds its two groups. rmdir leaves a busy one.
    find "$dir" -mindepth 1 -depth -type d -exec rmdir {} \; 2>/dev/null || true
    dir=$dir/$$
    if [[ $base == /sys/fs/cgroup ]]; then # v2: a child's cpu.weight needs cpu in its parent's subtree
        echo +cpu >"$base/cgroup.subtree_control" 2>/dev/null || true
        echo +cpu >"$base/shimkeeper-bench/cgroup.subtree_control"
        mkdir "$dir"
        echo +cpu >"$dir/cgroup.subtree_control"
    else
        mkdir "$dir"
    fi
    for group in control-plane nodes; do
        mkdir "$dir/$group"
        if [[ -e $dir/$group/cpu.shares ]]; then
            echo 1024 >"$dir/$group/cpu.shares"
        else
            echo 100 >"$dir/$group/cpu.weight"
        fi
    done
    # shellcheck disable=SC2034
    CPU_GROUP_CONTROL_PLANE=$dir/control-plane CPU_GROUP_NODES=$dir/nodes
    echo "CPU groups: the control plane (kube-apiserver, etcd, the coordinators) and the agents in two of equal weight under $dir"
}

cpu_group_join() {
    local dir=$1 pid
    shift
    [[ -n $dir ]] || return 0
    for pid in "$@"; do
        echo "$pid" >"$dir/cgroup.procs"
    done
}
