#!/usr/bin/env bash
# Two `shimkeeper apply` started together on one node with different desired states (one declares
# shim alpha, the other shim beta; cloud-init and an Ansible role firing at once), 20 rounds with
# random start offsets. The node lock serialises them, so every round ends consistent: containerd's
# config, the current generation in state.json and CRI's handlers name the same shims, namely those
# of the apply that committed last; every apply that reports success has its change on the node when
# it returns; each makes at most one restart. The node lock does not depend on the containerd line:
# one line is enough.
# containerd-lines: 1.6
# seconds-about: 90
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
node_up "$T/node"
# Two restarts a round for 20 rounds are this test's normal course, not a restart storm.
node_unit_dropin 40-no-start-limit "[Unit]
StartLimitIntervalSec=0"
node_shim_serve

# Two agent configs sharing every path (store, containerd), each with its own shims.d.
for side in alpha beta; do
    mkdir -p "$T/$side/shims.d"
    cp "$NODE_AGENT_CONFIG" "$T/$side/shimkeeper.toml"
    node_shim_artifact "$side" v1
    write_shim_toml "$T/$side/shims.d/10-$side.toml" "$side" "$side" "$SERVER_URL/$side-v1.tar.gz" \
        "$(sha256_of "$T/artifacts/$side-v1.tar.gz")"
done

# installed_everywhere: "<config> | <state> | <cri>", each the sorted shims of alpha/beta it names.
installed_everywhere() {
    local config=() state cri=() name
    for name in alpha beta; do
        node_config_has_handler "$name" && config+=("$name")
        node_cri_has_handler "$name" && cri+=("$name")
    done
    state=$(ski -o json status | python3 -S -c 'import json, sys
s = json.load(sys.stdin)
cur = [g for g in s["generations"] if g["current"]]
print(" ".join(sorted(x["name"] for x in cur[0]["shims"])) if cur else "")')
    echo "${config[*]} | $state | ${cri[*]}"
}

for round in $(seq 1 20); do
    pids=()
    for side in alpha beta; do
        (
            sleep "0.$((RANDOM % 300))"
            rc=0
            "$SHIMKEEPER" -c "$T/$side/shimkeeper.toml" -o json apply >"$T/$side.json" \
                2>"$T/$side.err" || rc=$?
            echo "$rc" >"$T/$side.rc"
        ) &
        pids+=($!)
    done
    wait "${pids[@]}" # only these two: the harness's daemons are children of this shell too
    last="" last_generation=0
    for side in alpha beta; do
        [[ "$(cat "$T/$side.rc")" == 0 ]] ||
            fail "round $round: the $side apply failed: $(cat "$T/$side.err" "$T/$side.json")"
        read -r generation restarts changed < <(python3 -S -c 'import json, sys
o = json.load(open(sys.argv[1]))
print(o["generation"], o["restarts"], o["changed"])' "$T/$side.json")
        ((restarts <= 1)) || fail "round $round: the $side apply restarted containerd $restarts times"
        if ((generation > last_generation)); then
            last=$side last_generation=$generation
        fi
    done
    seen=$(installed_everywhere)
    [[ "$seen" == "$last | $last | $last" ]] ||
        fail "round $round: the apply of $last committed last, but config | state | CRI hold: $seen"
done
echo "ok: 20 rounds of two concurrent applies, every round consistent"
