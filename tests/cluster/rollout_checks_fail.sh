#!/usr/bin/env bash
# The rollout checks can fail. A check that passes on any record proves nothing: a check of
# rollout_crash.sh or rollout_halt.sh would pass on an empty recording (a dead watch recorder gives
# max holders 0 and violations 0) if it did not look for one. Here every check they rely on runs
# against a deliberately broken build and must fail, each with the message that names the breakage:
#   - SHIMKEEPER_FAULT_SWITCH=slot-wait (fault-injection builds): agents change a rolling Shim
#     without waiting for a slot; rollout_check (the API server's record) reports nodes changing
#     without a slot, and rollout_overlap (the transactions' own steps) more than maxUpdate nodes
#     past their point of no return at once;
#   - an empty recording (no recorder ran) fails both checks, and a record that lacks a node the
#     test expects fails rollout_check (the record does not cover the rollout).
# seconds-about: 35
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
"$SHIMKEEPER" -o json version | grep -q '"slot-wait"' ||
    { echo "skip: $SHIMKEEPER is not a -DSHIMKEEPER_FAULT_INJECTION=ON build"; exit 77; }
rollout_testbed
rate=$(stat -c %s "$T/www/demo.tar.gz") # one second per download
nodes=(node-1 node-2 node-3 node-4)
export ROLLOUT_STEPS=$T/steps ROLLOUT_LINGER=2 SHIMKEEPER_FAULT_SWITCH=slot-wait
: >"$ROLLOUT_STEPS"
rollout_agents 1 4 rollout=yes
unset SHIMKEEPER_FAULT_SWITCH


echo "--- empty recordings: nothing recorded proves nothing"
mkdir -p "$T/empty"
: >"$T/empty/leases" && : >"$T/empty/nodes" && : >"$T/empty/steps"
expect_failure rollout "rollout_timeline.py on an empty record" "no lease event recorded" \
    python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/rollout_timeline.py" "$T/empty/leases" \
    "$T/empty/nodes" demo 1 --nodes "${nodes[*]}"
expect_failure rollout "txn_overlap.py on an empty record" "is empty" \
    python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/txn_overlap.py" "$T/empty/steps" 1 "${nodes[@]}"

echo "--- a rollout with maxUpdate 1 whose agents skip the slot wait"
kube_wait_for 60 coordinator_elected || fail "no coordinator was elected"
rollout_record
kube_shim_yaml demo "$SERVER_URL/slow/$rate/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")" \
    "  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: 1}}" | kube_admin apply -f - >/dev/null
all_finished() {
    rollout_finished_on demo 1 "${nodes[@]}"
}
kube_wait_for 120 all_finished ||
    fail "not every node finished: $(for n in "${nodes[@]}"; do echo "$n $(rollout_annotation "$n" demo)"; done)"
grep -q "SHIMKEEPER_FAULT_SWITCH=slot-wait" "$T"/roots/node-*.log || fail "no agent ran broken"
expect_failure rollout "rollout_check" "without a slot" rollout_check demo 1
expect_failure rollout "rollout_overlap" "past their point of no return at once" \
    rollout_overlap 1 "${nodes[@]}"
expect_failure rollout "rollout_check's coverage" "node-9 never started changing demo" \
    rollout_check demo 4 "" --nodes "${nodes[*]} node-9"
