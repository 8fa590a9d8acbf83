#!/usr/bin/env bash
# A real sandboxed node (node_harness.sh: systemd --user + containerd) with its agent running in
# cluster mode, as a process of its own, so that a cluster scenario runs several side by side
# (the harness keeps one node per process in its exports).
#
#   cluster_node.sh DIR NODE_NAME KUBECONFIG &      (KUBECONFIG: the node's credential)
#
# Brings the node up in DIR, counts containerd starts from then on (DIR/starts.log), adds [kube]
# to the agent config, writes DIR/node.env (this node's exports: source it in a subshell to act
# on the node), starts `shimkeeper run` (log DIR/agent.log, status DIR/status.json) and touches
# DIR/ready. SIGTERM stops the agent, then the node.
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_shim.sh"
set -euo pipefail
node_reexec_in_namespace "$@"
dir=$1 name=$2 kubeconfig=$3

node_up "$dir"
node_count_starts
cat >>"$NODE_AGENT_CONFIG" <<TOML

[kube]
kubeconfig = "$kubeconfig"
node_name = "$name"
# As on the sandbox roots (kube_rollout.sh, rollout_root): the download stays in the slot.
stage_ahead = false
TOML
export -p | grep -E '^declare -x (NODE_[A-Z_]*|XDG_[A-Z_]*|DBUS_SESSION_BUS_ADDRESS|PATH)=' \
    >"$dir/node.env"

"$SHIMKEEPER" -c "$NODE_AGENT_CONFIG" --log-level debug run --status-file "$dir/status.json" \
    >"$dir/agent.log" 2>&1 &
agent=$!
stop_agent() {
    kill -TERM "$agent" 2>/dev/null || true
    wait "$agent" 2>/dev/null || true
    exit 0 # node_down runs on EXIT
}
trap stop_agent TERM INT
touch "$dir/ready"
wait "$agent" || node_log "the agent of $name exited with status $?: see $dir/agent.log"
