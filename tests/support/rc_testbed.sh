# The RuntimeClass invariant's test bed (runtime_class_selects_serving_nodes.sh,
# runtime_class_checks_fail.sh): real sandboxed nodes node-a and node-b, and rc_invariant.py's
# recorder of the RuntimeClass, the Nodes and each node's CRI handlers. Sourced after
# kube_harness.sh, node_harness.sh and coordinator_process.sh, with $T and the API server up.

# rc_node_start LETTER [VAR=VALUE...]: node-LETTER in $T/LETTER, its agent with a node-bound
# token and the given environment (a fault switch, say), in the background.
rc_node_start() {
    local letter=$1
    shift
    env "$@" bash "$SHIMKEEPER_SOURCE_DIR/tests/support/cluster_node.sh" "$T/$letter" "node-$letter" \
        "$(kube_node_token_kubeconfig "node-$letter")" >"$T/$letter.out" 2>&1 &
    sk_track $!
}

# rc_nodes_ready LETTER...: waits for each node to be up.
rc_nodes_ready() {
    local letter
    for letter in "$@"; do
        kube_wait_for 90 test -e "$T/$letter/ready" || fail "node $letter did not come up: $(cat "$T/$letter.out")"
    done
}

rc_socket() { (source "$T/$1/node.env" && echo "$NODE_SOCKET"); }

# rc_record RUNTIMECLASS: starts the recorder into $T/samples.jsonl until $T/stop-sampling
# exists; its pid in $sampler.
rc_record() {
    kube_as admin config view --raw -o jsonpath='{.users[0].user.token}' >"$T/admin.token"
    python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/rc_invariant.py" record "$KUBE_SERVER" "$KUBE_CA" \
        "$T/admin.token" "$1" "$T/samples.jsonl" "$T/stop-sampling" \
        "$SHIMKEEPER_BUILD_DIR/tests/support/cri-client" "node-a=$(rc_socket a)" "node-b=$(rc_socket b)" \
        2>"$T/sampler.err" &
    sampler=$!
    sk_track $sampler
}
