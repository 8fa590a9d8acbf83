# shellcheck shell=bash
# `shimkeeper coordinate` for the cluster scenarios: the coordinator is a process of its own,
# with the coordinator identity (kube_harness.sh), as on a control-plane machine. Source after
# common.sh and kube_harness.sh (after kube_up); the processes are stopped with the test.
#
#   coordinator_start NAME   one candidate named NAME (its Lease holderIdentity); its pid is
#                            COORDINATOR_PIDS[NAME], its log $T/NAME.log
#   coordinator_leader       the holder of the coordinator Lease now ("" when none)
#   coordinator_elected      true while some candidate holds it (kube_wait_for 60 coordinator_elected)

declare -A COORDINATOR_PIDS=()

coordinator_start() {
    [[ -f $T/coordinator.toml ]] || cat >"$T/coordinator.toml" <<TOML
[kube]
kubeconfig = "$(kube_kubeconfig coordinator)"
TOML
    "$SHIMKEEPER" -c "$T/coordinator.toml" --log-level debug coordinate --identity "$1" \
        >"$T/$1.log" 2>&1 &
    COORDINATOR_PIDS[$1]=$!
    sk_track $!
}

coordinator_leader() {
    kube_admin get lease shimkeeper-coordinator -n shimkeeper-system \
        -o jsonpath='{.spec.holderIdentity}' 2>/dev/null
}

coordinator_elected() { [[ -n $(coordinator_leader) ]]; }
