# shellcheck shell=bash
# Helpers for the rollout scenarios (tests/cluster/rollout_*.sh) and bench/rollout: many agents on
# sandbox roots against the real API server, and a record of the rollout as the API server saw it.
# Source after common.sh and kube_harness.sh; then rollout_testbed, or kube_up and an artifact
# server of the test's own.
#
#   rollout_testbed                the control plane up, $T/www/demo.tar.gz served (SERVER_URL) and
#                                  two `shimkeeper coordinate` candidates running (coord-1, coord-2:
#                                  coordinator_process.sh), or skip (77) without the peers or
#                                  containerd
#   rollout_require_fault_build    skip (77) unless $SHIMKEEPER is a -DSHIMKEEPER_FAULT_INJECTION=ON
#                                  build (ROLLOUT_STEPS records the steps through it)
#   pass MSG                       a step done
#   expect_failure BUILD WHAT MESSAGE CMD...   CMD (a check, WHAT) must fail on the broken BUILD
#                                  ("rollout", "coordinator") and say MESSAGE; tests of the checks
#   rollout_root DIR NODE          a sandbox root whose agent acts for NODE (a token bound to it): a
#                                  containerd config, no containerd; a transaction there is fetch,
#                                  verify, store, links and config edit, no restart
#   rollout_agents FIRST LAST [KEY=VALUE...]   Nodes node-FIRST..node-LAST (with those labels),
#                                  each with `shimkeeper --root $T/roots/node-i run --no-restart`
#                                  (log $T/roots/node-i.log, pid in ROLLOUT_PIDS[node-i])
#   ROLLOUT_STAGE_AHEAD=true       set before rollout_root: the agent stages a waiting Shim's
#                                  artifact before it asks for a slot (the product's default;
#                                  off here, see rollout_root)
#   rollout_record                 starts recording Lease and Node watch events
#                                  ($T/leases.events, $T/nodes.events; each line stamped with when
#                                  it was seen in $T/leases.stamped, $T/nodes.stamped)
#   rollout_check SHIM LIMIT [RV] [--nodes "A B..."]   rollout_timeline.py over the record
#                                  (after RV, "" for all): prints the figures, fails on a node
#                                  changing without a slot, more than LIMIT holders, an empty
#                                  record, or a node of --nodes whose change is not in it
#   ROLLOUT_STEPS=FILE             set before rollout_agents / rollout_start_agent: each agent
#                                  appends "NODE STEP TIME" to FILE at every step of its
#                                  transactions (SHIMKEEPER_FAULT_RUN, fault-injection builds);
#                                  rollout_overlap LIMIT NODE... (txn_overlap.py) then counts
#                                  the nodes past their point of no return at once
#   ROLLOUT_LINGER=SECONDS         with ROLLOUT_STEPS: each transaction stays that long between
#                                  its first change and its commit, so that two that overlap
#                                  are seen to (a --no-restart transaction is milliseconds)
#   ROLLOUT_HOLD_UNTIL=FILE        with ROLLOUT_STEPS: each transaction waits at its first change
#                                  until FILE exists (set it for one rollout_start_agent only)
#   ROLLOUT_HOLD_STEP=STEP         with ROLLOUT_HOLD_UNTIL: wait at another step instead (e.g.
#                                  planned: after the write-ahead, before the last check)
#   rollout_start_agent NODE [KUBECONFIG]   (re)starts NODE's agent on its sandbox root, with
#                                  another kubeconfig if given
#   rollout_proxied_agent NODE [KEY=VALUE...]   Node NODE (with those labels) and its agent on a
#                                  sandbox root, talking to the API server through a pausable TCP
#                                  proxy (kube_harness.sh's kube_proxy_start, pid in KUBE_PROXY):
#                                  kill -USR1 pauses it, -USR2 resumes it; kube_proxy_is STATE
#                                  (paused, running) says which it is now
#   rollout_log_order LOG SHIM     the agent log LOG has "took slot", then the committed change,
#                                  then "released slot" for SHIM, in that order
#   rollout_annotation NODE SHIM   the node's state JSON for SHIM (empty when none)
#   rollout_finished NODE SHIM [GENERATION]   the node applied SHIM (at that generation): installed,
#                                  or installing with "--no-restart" on a sandbox root
#   rollout_finished_on SHIM GENERATION NODE...   each NODE did (GENERATION may be empty); one
#                                  read of the Nodes
#   rollout_holds NODE             NODE holds a rollout slot now
#   rollout_rv                     the API server's current resourceVersion (a list's)
#   rollout_failed_slot            "NAME HOLDER RESOURCEVERSION" of each slot marked failed
#   rollout_no_slot_after RV [SHIM] the Lease record has no slot (of SHIM) taken (created, or
#                                  taken over unfailed) after RV: a halt halts (slots_after.py)
#   rollout_slot_holders           "NAME HOLDER" of each slot Lease
#   rollout_kill_a_holder          SIGKILLs the agent of a node while it holds a slot, before its
#                                  point of no return: sets VICTIM, SLOT and RENEWED (the slot's
#                                  last renewTime); a node that had just finished, or had marked
#                                  its slot committing, is restarted and another one chosen
#   rollout_takeover_window        waits for another node to take SLOT, then prints how long after
#                                  RENEWED it did (the API server's times) and fails unless that is
#                                  15 to 20 s: the lease ran out, not before, and not much later

declare -A ROLLOUT_PIDS=()
source "$SHIMKEEPER_SOURCE_DIR/tests/support/coordinator_process.sh"

pass() { echo "ok: $*"; }

rollout_require_fault_build() {
    "$SHIMKEEPER" -o json version | grep -q '"fault_points"' ||
        skip "$SHIMKEEPER is not a -DSHIMKEEPER_FAULT_INJECTION=ON build (steps are recorded through it)"
}

expect_failure() {
    local build=$1 what=$2 message=$3 out
    shift 3
    if out=$("$@" 2>&1); then
        fail "$what passed on a broken $build: $out"
    fi
    grep -q -- "$message" <<<"$out" || fail "$what failed without saying '$message': $out"
    echo "$out" | sed 's/^/    /'
    pass "$what fails: $message"
}

rollout_testbed() {
    kube_require_peers
    sk_init
    command -v containerd >/dev/null || skip "containerd is needed for its default config"
    kube_up "$T/kube"
    mkdir -p "$T/www"
    make_shim_archive "$(shim_binary_for demo)" "$T/www/demo.tar.gz"
    sk_start_server "$T/www"
    coordinator_start coord-1
    coordinator_start coord-2
}

# rollout_node_kubeconfig NODE: the agent's credential for NODE: a token of shimkeeper-node bound
# to it, or with ROLLOUT_CREDENTIAL=kubelet the kubelet-style client certificate (the scenarios'
# `.kubelet` variants in tests/CMakeLists.txt run the same checks with it).
rollout_node_kubeconfig() {
    if [[ ${ROLLOUT_CREDENTIAL:-token} == kubelet ]]; then
        kube_node_cert_kubeconfig "$1"
    else
        kube_node_token_kubeconfig "$1" 2h
    fi
}

rollout_root() {
    mkdir -p "$1/etc/containerd" "$1/etc/shimkeeper/shims.d"
    containerd config default >"$1/etc/containerd/config.toml"
    # The scenarios make a transaction long with a slow download, so that slots overlap and the
    # bound is exercised; staged ahead, that download would happen before the slot, and the slot
    # would hold milliseconds. rollout_stage_ahead.sh and bench/rollout turn it on.
    cat >"$1/etc/shimkeeper/shimkeeper.toml" <<TOML
[kube]
kubeconfig = "$(rollout_node_kubeconfig "$2")"
stage_ahead = ${ROLLOUT_STAGE_AHEAD:-false}
TOML
}

rollout_agents() {
    local first=$1 last=$2 i node
    shift 2
    mkdir -p "$T/roots"
    for ((i = first; i <= last; i++)); do
        node=node-$i
        kube_create_node "$node" "$@"
        rollout_root "$T/roots/$node" "$node"
        rollout_start_agent "$node"
    done
}

rollout_start_agent() {
    local node=$1
    if [[ -n ${2:-} ]]; then
        sed -i "s|^kubeconfig = .*|kubeconfig = \"$2\"|" "$T/roots/$node/etc/shimkeeper/shimkeeper.toml"
    fi
    local -a env=()
    if [[ -n ${ROLLOUT_STEPS:-} ]]; then
        local linger=""
        [[ -n ${ROLLOUT_LINGER:-} ]] &&
            linger="; if [ \"\$SHIMKEEPER_FAULT_STEP\" = links ]; then sleep $ROLLOUT_LINGER; fi"
        [[ -n ${ROLLOUT_HOLD_UNTIL:-} ]] &&
            linger+="; if [ \"\$SHIMKEEPER_FAULT_STEP\" = ${ROLLOUT_HOLD_STEP:-links} ]; then while [ ! -e '$ROLLOUT_HOLD_UNTIL' ] && [ ! -e '$T/.ending' ]; do sleep 0.2; done; fi"
        env=("SHIMKEEPER_FAULT_RUN=*:echo \"$node \$SHIMKEEPER_FAULT_STEP \$(date +%s.%N)\" >>'$ROLLOUT_STEPS'$linger")
    fi
    env "${env[@]}" "$SHIMKEEPER" --root "$T/roots/$node" --log-level debug run --no-restart \
        --status-file /run/status.json >>"$T/roots/$node.log" 2>&1 &
    ROLLOUT_PIDS[$node]=$!
    sk_track $!
}

rollout_proxied_agent() {
    local node=$1 proxied
    shift
    kube_proxy_start || fail "no proxy in front of the API server"
    mkdir -p "$T/roots"
    kube_create_node "$node" "$@"
    rollout_root "$T/roots/$node" "$node"
    proxied=$T/$node-proxied.kubeconfig
    kube_proxied_kubeconfig "$(rollout_node_kubeconfig "$node")" "$proxied" ||
        fail "no kubeconfig through the proxy"
    rollout_start_agent "$node" "$proxied"
}

rollout_overlap() {
    python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/txn_overlap.py" "$ROLLOUT_STEPS" "$@"
}

rollout_record() {
    local record="$SHIMKEEPER_SOURCE_DIR/tests/support/watch_record.py"
    python3 "$record" "$KUBE_BIN/kubectl" "$KUBECONFIG_ADMIN" \
        /apis/coordination.k8s.io/v1/namespaces/shimkeeper-system/leases \
        "$T/leases.events" "$T/leases.stamped" 2>"$T/leases.err" &
    sk_track $!
    python3 "$record" "$KUBE_BIN/kubectl" "$KUBECONFIG_ADMIN" /api/v1/nodes \
        "$T/nodes.events" "$T/nodes.stamped" 2>"$T/nodes.err" &
    sk_track $!
    # Started, not yet listing: a rollout begun now (with staging ahead a transaction takes
    # milliseconds) would be missing from the record's start. Each recorder lists first, one
    # event per object there is.
    local nodes leases
    nodes=$(kube_admin get nodes -o name | wc -l)
    leases=$(kube_admin get leases -n shimkeeper-system -o name | wc -l)
    rollout__listed() {
        (($(wc -l <"$T/nodes.events") >= nodes && $(wc -l <"$T/leases.events") >= leases))
    }
    touch "$T/nodes.events" "$T/leases.events"
    kube_wait_for 30 rollout__listed ||
        fail "the watch recorders did not list the $nodes Nodes and $leases Leases: $(cat "$T/nodes.err" "$T/leases.err")"
}

rollout_check() {
    python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/rollout_timeline.py" \
        "$T/leases.events" "$T/nodes.events" "$1" "$2" ${3:+--since-rv "$3"} "${@:4}"
}

rollout_log_order() {
    awk -v shim="$2" '
        index($0, "took slot") && index($0, "Shim/" shim " ") { took = NR }
        took && !done && index($0, shim ": ") && / committed/ { done = NR }
        done && index($0, "released slot") && index($0, "Shim/" shim " ") { released = NR }
        END { exit !(took && done && released) }' "$1"
}

rollout_annotation() {
    kube_get "/api/v1/nodes/$1" | python3 -S -c 'import json, sys
print(json.load(sys.stdin)["metadata"].get("annotations", {}).get("shim.containerd.x-k8s.io/" + sys.argv[1], ""))' "$2"
}

# These are polled, several scenarios at once: one curl and one python3 for every node, where a
# kubectl and two python3 a node kept a core busy.
rollout_finished_on() {
    kube_get /api/v1/nodes | python3 -S -c 'import json, sys
shim, generation, wanted = sys.argv[1], sys.argv[2], set(sys.argv[3:])
for node in json.load(sys.stdin)["items"]:
    raw = node["metadata"].get("annotations", {}).get("shim.containerd.x-k8s.io/" + shim)
    if node["metadata"]["name"] not in wanted or not raw:
        continue
    s = json.loads(raw)
    at = not generation or s["generation"] == int(generation)
    if at and (s["state"] == "installed" or
               (s["state"] == "installing" and "no-restart" in s.get("reason", ""))):
        wanted.discard(node["metadata"]["name"])
sys.exit(1 if wanted else 0)' "$@"
}

rollout_finished() {
    rollout_finished_on "$2" "${3:-}" "$1"
}

# rollout_all_finished SHIM GENERATION: every node of the array `nodes` finished it.
rollout_all_finished() {
    rollout_finished_on "$1" "$2" "${nodes[@]}"
}

ROLLOUT_LEASES=/apis/coordination.k8s.io/v1/namespaces/shimkeeper-system/leases

rollout_holds() {
    kube_get "$ROLLOUT_LEASES" | python3 -S -c 'import json, sys
sys.exit(not any("-slot-" in l["metadata"]["name"] and l["spec"].get("holderIdentity") == sys.argv[1]
                 for l in json.load(sys.stdin)["items"]))' "$1"
}

rollout_rv() {
    kube_get "$ROLLOUT_LEASES" |
        python3 -S -c 'import json, sys; print(json.load(sys.stdin)["metadata"]["resourceVersion"])'
}

rollout_failed_slot() {
    kube_get "$ROLLOUT_LEASES" | python3 -S -c 'import json, sys
for l in json.load(sys.stdin)["items"]:
    if l["metadata"].get("annotations", {}).get("shim.containerd.x-k8s.io/failed"):
        print(l["metadata"]["name"], l["spec"]["holderIdentity"], l["metadata"]["resourceVersion"])'
}

rollout_no_slot_after() {
    python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/slots_after.py" "$T/leases.events" "$1" ${2:+"$2"}
}

rollout_slot_holders() {
    kube_get "$ROLLOUT_LEASES" | python3 -S -c 'import json, sys
for l in json.load(sys.stdin)["items"]:
    if "-slot-" in l["metadata"]["name"]:
        failed = l["metadata"].get("annotations", {}).get("shim.containerd.x-k8s.io/failed")
        print(l["metadata"]["name"], l["spec"].get("holderIdentity", ""), "failed" if failed else "")'
}

# Chosen in one reading of the leases: two readings can disagree, slots change hands every few
# seconds. A failed slot's holder is done with it.
rollout_pick_holder() {
    local failed
    while read -r SLOT VICTIM failed; do
        [[ -n $VICTIM && -z $failed ]] && return 0
    done < <(rollout_slot_holders)
    return 1
}

# rollout_last_renewal SLOT NODE: "<holder> <last renewal> <committing>" of SLOT: its holder (the
# Lease's), when NODE last took or renewed it (its entry on its own Node, when the entry names this
# grant; else the grant's own time) and the committing mark of that entry. Every time here is this
# machine's clock (the agents and the coordinator run here).
rollout_last_renewal() {
    local slot=$1 node=$2 shim=${1%-slot-*} lease entry
    lease=$(kube_admin get lease "$slot" -n shimkeeper-system -o json 2>/dev/null) || return 1
    entry=$(kube_admin get node "$node" -o jsonpath="{.metadata.annotations.shim\.containerd\.x-k8s\.io/held_$shim}" 2>/dev/null) || true
    python3 -S - "$lease" "$entry" <<'PY'
import json, sys
lease = json.loads(sys.argv[1])
entry = json.loads(sys.argv[2]) if sys.argv[2] else {}
spec = lease.get("spec", {})
grant = lease["metadata"].get("annotations", {}).get("shim.containerd.x-k8s.io/grant")
if entry.get("grant") == (grant or lease["metadata"]["uid"]):
    print(spec.get("holderIdentity", ""), entry.get("renewed", ""), entry.get("committing", ""))
else:
    print(spec.get("holderIdentity", ""), spec.get("renewTime", ""), "")
PY
}

rollout_kill_a_holder() {
    local attempt holder committing
    for attempt in 1 2 3 4 5; do
        kube_wait_for 60 rollout_pick_holder || fail "no worker took a slot"
        kill -KILL "${ROLLOUT_PIDS[$VICTIM]}"
        read -r holder RENEWED committing < <(rollout_last_renewal "$SLOT" "$VICTIM") || true
        [[ $holder == "$VICTIM" && -z $committing ]] && return 0
        # Killed between two kubectl calls, it may have just finished; killed past its point of
        # no return (its entry marked committing), its slot is kept longer than a lease.
        rollout_start_agent "$VICTIM"
    done
    fail "no worker could be killed while it held a slot"
}

# The new holder and its acquisition, in one reading (sets ROLLOUT_ACQUIRED).
rollout_taken_over() {
    local holder when
    read -r holder when < <(kube_admin get lease "$SLOT" -n shimkeeper-system \
        -o jsonpath='{.spec.holderIdentity} {.spec.acquireTime}' 2>/dev/null)
    [[ -n $holder && $holder != "$VICTIM" ]] && ROLLOUT_ACQUIRED=$when
}

# A dead holder's slot is revoked a lease (15 s) after the coordinator last saw it renewed, and
# freed 11 s (slot_timing::revoked_for) after that; then granted at once: 26 s, and a few more for
# the passes' timers and this machine's load.
rollout_takeover_window() {
    kube_wait_for 60 rollout_taken_over || { echo "$VICTIM's slot $SLOT was never taken over"; return 1; }
    python3 -S - "$RENEWED" "$ROLLOUT_ACQUIRED" "$SLOT" "$VICTIM" <<'PY'
import datetime, sys
t = lambda s: datetime.datetime.strptime(s, "%Y-%m-%dT%H:%M:%S.%fZ")
waited = round((t(sys.argv[2]) - t(sys.argv[1])).total_seconds(), 1)
print("%s's slot %s was taken over %ss after its last renewal (lease 15 s, then revoked 11 s)"
      % (sys.argv[4], sys.argv[3], waited))
sys.exit(0 if 26 <= waited <= 32 else 1)
PY
}
