#!/usr/bin/env bash
# Scenario 7: shimkeeper SIGKILLed at every step of a transaction (fault-injection build:
# SHIMKEEPER_FAULT=<step>), for an install and for a removal. What an operator checks after the
# next start has recovered: containerd's config parses, containerd is active and healthy, and the
# shim is either fully installed (bin/ link, config block and CRI handler) or fully absent — never
# a mix; the shim installed before is untouched; and a plain apply then converges.
#
# To look at the node right after recovery and before the next transaction changes it, the
# recovering apply is given one more shim whose artifact does not exist: apply recovers the
# interrupted transaction first, then refuses the new one while staging, before touching the node.
# What this proves is shimkeeper's (journal, daemon, restart guard), not a config format: the
# oldest and the newest containerd line are enough (keeps scripts/test inside its budget).
# containerd-lines: 1.6 2
# seconds-about: 60
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"

# SHIMKEEPER_FAULT only exists in builds configured with -DSHIMKEEPER_FAULT_INJECTION=ON; such a
# build lists its fault points, in the order a transaction reaches them.
mapfile -t k_steps < <("$SHIMKEEPER" -o json version |
    python3 -S -c 'import json, sys; print("\n".join(json.load(sys.stdin).get("fault_points", [])))')
if ((${#k_steps[@]} == 0)); then
    skip "$SHIMKEEPER is not a -DSHIMKEEPER_FAULT_INJECTION=ON build"
fi
echo "fault points: ${k_steps[*]}"

node_up "$T/node"
# Many restarts in a short time are this test's normal course, not what it is about (that is
# txn_restart_storm.sh): lift the unit's start limit so that the restart guard need not wait.
node_unit_dropin 40-no-start-limit "[Unit]
StartLimitIntervalSec=0"
node_shim_serve
node_shim_declare base v1
expect_exit 0 ski apply
expect_output_contains "Committed generation 1"

demo_binary=$(shim_binary_for demo)
unreachable=$NODE_SHIMS_D/90-unreachable.toml

# check_old_or_new WHAT DIGEST: after recovery, demo is fully there (pointing at DIGEST) or fully
# absent, and everything else an operator relies on holds.
check_old_or_new() {
    local what=$1 digest=$2 presence recorded
    node_config_parses || fail "$what: containerd cannot load $NODE_CONFIG"
    node_unit_is_active || fail "$what: containerd.service is $(node_unit_prop ActiveState)"
    node_wait_healthy || fail "$what: containerd is not healthy"
    presence=$(node_handler_presence demo) || fail "$what: CRI Status does not answer"
    case $presence in
    absent) ;;
    present)
        [[ "$(readlink "$NODE_STORE_DIR/bin/$demo_binary")" == \
            "$NODE_STORE_DIR/store/sha256/$digest/$demo_binary" ]] ||
            fail "$what: bin/$demo_binary points at $(readlink "$NODE_STORE_DIR/bin/$demo_binary")"
        ;;
    *) fail "$what: demo is half there after recovery ($presence)" ;;
    esac
    # shimkeeper's own record agrees with the node: demo is in the current generation iff present.
    recorded=$(ski -o json status | python3 -S -c 'import json, sys
status = json.load(sys.stdin)
current = [g for g in status["generations"] if g["current"]]
names = [s["name"] for s in current[0]["shims"]] if current else []
print("present" if "demo" in names else "absent")') || fail "$what: status -o json failed"
    [[ $recorded == "$presence" ]] ||
        fail "$what: demo is $presence on the node, but $recorded in the current generation"
    [[ "$(node_handler_presence base)" == present ]] ||
        fail "$what: the shim installed before is $(node_handler_presence base)"
    [[ "$(node_journal_field result)" != in-progress ]] ||
        fail "$what: the journal still holds an unfinished transaction"
    echo "$what: recovered to demo $presence"
}

# crash_then_recover WHAT STEP DIGEST: apply killed at STEP, then an apply that recovers and
# stops before changing anything, then the checks.
crash_then_recover() {
    local what=$1 step=$2 digest=$3
    expect_exit 137 env SHIMKEEPER_FAULT="$step" "$SHIMKEEPER" -c "$NODE_AGENT_CONFIG" apply
    [[ "$(node_journal_field result)" == in-progress ]] ||
        fail "$what: killed at $step, yet the journal shows $(node_journal_field result)"
    write_shim_toml "$unreachable" unreachable unreachable "$SERVER_URL/no-such-artifact.tar.gz" \
        "$(printf '0%.0s' {1..64})"
    expect_exit 1 ski apply
    expect_output_contains "recovered interrupted transaction"
    expect_output_contains "no-such-artifact.tar.gz"
    rm "$unreachable"
    check_old_or_new "$what" "$digest"
}

for step in "${k_steps[@]}"; do
    # Install: demo absent before, the crashed apply adds it.
    node_shim_declare demo "$step"
    digest=$(node_shim_digest demo "$step")
    crash_then_recover "install killed at $step" "$step" "$digest"
    expect_exit 0 ski apply
    [[ "$(node_handler_presence demo)" == present ]] ||
        fail "install killed at $step: demo is $(node_handler_presence demo) after converging"

    # Removal: demo present before, the crashed apply removes it.
    rm "$NODE_SHIMS_D/10-demo.toml"
    crash_then_recover "removal killed at $step" "$step" "$digest"
    expect_exit 0 ski apply
    [[ "$(node_handler_presence demo)" == absent ]] ||
        fail "removal killed at $step: demo is $(node_handler_presence demo) after converging"
done
node_config_parses || fail "containerd cannot load the final config"
echo "ok: killed at every step, install and removal, the node always recovered to old or new"
