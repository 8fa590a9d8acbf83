# shellcheck shell=bash
# The prologue every transaction scenario shares (tests/node/*.sh that drive shimkeeper): the
# helpers, a private mount namespace (root only; otherwise skip 77), and the test folder $T.
#
#   source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
#   node_up "$T/node"; node_shim_serve; ...
#
# node_reexec_in_namespace re-executes the scenario itself (BASH_SOURCE[-1]), not this file.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_shim.sh"
node_reexec_in_namespace "$@"
sk_init

# node_snapshot_before: remembers what a failing apply must leave as it is: the containerd
# config (every file of its folder), the store's bin/ links and CRI's handlers.
node_snapshot_before() {
    NODE_SNAPSHOT_CONFIG=$(node_config_digest)
    NODE_SNAPSHOT_BIN=$(tree_digest "$NODE_STORE_DIR/bin")
    NODE_SNAPSHOT_HANDLERS=$(node_cri_handlers | LC_ALL=C sort)
}

# node_expect_as_before WHAT: fails naming WHAT unless config, bin/ and CRI handlers are exactly
# as node_snapshot_before saw them.
node_expect_as_before() {
    local what=$1
    [[ "$(node_cri_handlers | LC_ALL=C sort)" == "$NODE_SNAPSHOT_HANDLERS" ]] ||
        fail "$what: CRI handlers are $(node_cri_handlers | tr '\n' ' ') (before:" \
            "$(tr '\n' ' ' <<<"$NODE_SNAPSHOT_HANDLERS"))"
    [[ "$(node_config_digest)" == "$NODE_SNAPSHOT_CONFIG" ]] ||
        fail "$what: the config is not byte-identical to before"
    [[ "$(tree_digest "$NODE_STORE_DIR/bin")" == "$NODE_SNAPSHOT_BIN" ]] ||
        fail "$what: bin/ differs from before"
}
