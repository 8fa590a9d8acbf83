# shellcheck shell=bash
# Helpers for tests/cluster/coordinator_*.sh: the coordinator run by kube-probe as the coordinator
# identity, Shims applied and Nodes "reporting" as the admin (standing in for node agents).
# Source after kube_harness.sh (the coordinators are stopped on exit):
#
#   coord_testbed                   the control plane up (kube_up), or skip (77) without peers
#   coord_start IDENTITY [lease=S]  a coordinator candidate in the background; its pid is
#                                   COORD_PIDS[IDENTITY], its output $KUBE_DIR/coord-IDENTITY.out
#   coord_lead IDENTITY [lease=S]   coord_start, then waits until it leads
#   coord_wait_line IDENTITY REGEX [SECONDS]   waits for a line of its output
#   coord_passes IDENTITY           the number of its last finished pass (0 before any)
#   coord_wait_passes IDENTITY N    waits until it has finished more than N passes
#   coord_writes IDENTITY           its API writes so far, as of its last pass
#   shim_apply NAME [SPEC-YAML-LINES]  a Shim (runtimeType io.containerd.NAME.v2) with extra spec
#   shim_get NAME JSONPATH          one field of the Shim, as the admin
#   shim_condition NAME TYPE FIELD  status|reason|message|lastTransitionTime of a condition
#   wait_eq SECONDS EXPECTED CMD... waits until CMD prints EXPECTED (fails the test otherwise)
#   node_report NODE SHIM STATE [REASON]  the node's annotation at the Shim's current generation,
#                                   and its label while STATE is installed (removed otherwise)
#   node_forget NODE SHIM           the node's label and annotation removed
#   pass MSG / fail MSG             a step done / the test failed, showing the coordinators' output

declare -A COORD_PIDS=()
COORD_PROBE=${SHIMKEEPER_BUILD_DIR:?}/tests/support/kube-probe
[[ -x $COORD_PROBE ]] || kube_skip "kube-probe is not built"

coord__stop_all() {
    local pid
    for pid in "${COORD_PIDS[@]}"; do
        kill -KILL "$pid" 2>/dev/null
    done
}
trap coord__stop_all EXIT

coord_testbed() {
    kube_require_peers
    kube_up "$(mktemp -d /tmp/sk-kube.XXXXXX)"
}

pass() { echo "ok: $*"; }

fail() {
    echo "FAIL: $*" >&2
    local file
    for file in "$KUBE_DIR"/coord-*.out "$KUBE_DIR"/coord-*.err; do
        [[ -f $file ]] || continue
        echo "== $file" >&2
        tail -n 40 "$file" >&2
    done
    exit 1
}

coord_start() {
    local identity=$1
    shift
    "$COORD_PROBE" "$(kube_kubeconfig coordinator)" coordinator shimkeeper-system "$identity" 600 "$@" \
        >"$KUBE_DIR/coord-$identity.out" 2>"$KUBE_DIR/coord-$identity.err" &
    COORD_PIDS[$identity]=$!
}

coord_lead() {
    coord_start "$@"
    coord_wait_line "$1" '^LEADER 1$'
}

coord__has_line() { grep -qE -- "$2" "$KUBE_DIR/coord-$1.out"; }

coord_wait_line() {
    kube_wait_for "${3:-60}" coord__has_line "$1" "$2" || fail "coordinator $1 never printed \"$2\""
}

# coord_rounds IDENTITY: the election rounds that agent ran so far (0 before its first).
coord_rounds() {
    local last
    last=$(grep -E '^ROUNDS ' "$KUBE_DIR/coord-$1.out" | tail -n 1) || true
    echo "${last#ROUNDS }" | sed 's/^$/0/'
}

coord_passes() {
    local last
    last=$(grep -E '^PASS ' "$KUBE_DIR/coord-$1.out" | tail -n 1) || true
    [[ -n $last ]] || {
        echo 0
        return
    }
    read -r _ count _ <<<"$last"
    echo "$count"
}

coord_writes() {
    { grep -E '^PASS ' "$KUBE_DIR/coord-$1.out" || true; } | tail -n 1 |
        sed -E 's/.* writes=([0-9]+).*/\1/'
}

coord__passes_over() { (($(coord_passes "$1") > $2)); }

coord_wait_passes() {
    kube_wait_for 60 coord__passes_over "$1" "$2" || fail "coordinator $1 ran no pass after #$2"
}

shim_apply() {
    local name=$1 extra=${2:-}
    kube_shim_yaml "$name" "https://example.org/$name.tar.gz" "$(printf '%064d' 0)" "$extra" |
        kube_admin apply -f - >/dev/null
}

shim_get() {
    kube_admin get shim "$1" -o jsonpath="{$2}"
}

shim_condition() {
    shim_get "$1" ".status.conditions[?(@.type==\"$2\")].$3"
}

coord__prints() {
    local expected=$1
    shift
    [[ $("$@" 2>/dev/null) == "$expected" ]]
}

wait_eq() {
    local seconds=$1 expected=$2
    shift 2
    kube_wait_for "$seconds" coord__prints "$expected" "$@" ||
        fail "waited ${seconds}s for \"$expected\" from: $* (last: \"$("$@" 2>&1)\")"
}

# One merge patch per report: null removes a label or annotation, present or not.
coord__node_patch() {
    python3 -S - "$@" <<'PY'
import json, sys
shim, state, generation, reason, handler = sys.argv[1:]
key = "shim.containerd.x-k8s.io/" + shim
note = None if not state else json.dumps(
    {"state": state, "generation": int(generation), "reason": reason})
label = handler if state == "installed" else None  # an agent labels with the handler it serves
print(json.dumps({"metadata": {"labels": {key: label}, "annotations": {key: note}}}))
PY
}

node_report() {
    local node=$1 shim=$2 state=$3 reason=${4:-} handler
    handler=$(shim_get "$shim" .spec.handler)
    kube_admin patch node "$node" --type merge >/dev/null -p "$(coord__node_patch "$shim" "$state" \
        "$(shim_get "$shim" .metadata.generation)" "$reason" "${handler:-$shim}")"
}

node_forget() {
    kube_admin patch node "$1" --type merge -p "$(coord__node_patch "$2" "" 0 "" "")" >/dev/null
}
