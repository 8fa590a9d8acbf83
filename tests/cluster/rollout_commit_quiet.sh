#!/usr/bin/env bash
# A slot whose holder has begun its changes is kept by the coordinator for a lease plus the
# allowance the holder's committing mark states (30 s for a --no-restart transaction), so the
# holder does not renew it within that allowance (slot_keeper.hpp, renewal_due), and renews it
# once the allowance has passed; before its last freshness check (after the write-ahead) it
# renews as always. Two agents on sandbox roots, maxUpdate 1. node-1's transaction is held at its
# first change (ROLLOUT_HOLD_UNTIL) for 55 s, longer than a lease plus the allowance (45 s); from
# the API server's record of its Node:
#   - the first write of its entry after the committing mark comes 30 to 40 s after the mark (the
#     allowance, then the next round of every 5 s), not a renewal every 5 s;
#   - the coordinators never revoke the slot while the transaction is held, and node-1 finishes.
# node-2 is then held after its write-ahead, before its last check (ROLLOUT_HOLD_STEP=planned),
# for longer than a slot is trusted (10 s): its renewals go on every 5 s, so that check passes
# and node-2 changes and finishes.
# Seen failing each way: with a renewal every round (node-1's first write 5 s after the mark),
# with none past the mark (no write within 45 s of it, when the coordinator revokes), and with
# none past the mark before the last check (node-2 refuses its change: last confirmed 10 s ago).
# seconds-about: 110
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
rollout_require_fault_build
rollout_testbed
export ROLLOUT_STEPS=$T/steps
: >"$ROLLOUT_STEPS"
release=$T/release-node-1
ROLLOUT_HOLD_UNTIL=$release rollout_agents 1 1 rollout=yes
ROLLOUT_HOLD_UNTIL=$T/release-node-2 ROLLOUT_HOLD_STEP=planned rollout_agents 2 2 rollout=yes
kill -STOP "${ROLLOUT_PIDS[node-2]}" # node-1 goes first
kube_wait_for 60 coordinator_elected || fail "no coordinator was elected"
rollout_record
reached() { grep -q "^$1 $2 " "$ROLLOUT_STEPS"; } # NODE STEP
# "SEEN RENEWED COMMITTING" for each change of NODE's entry for demo (default node-1), in the
# record's order.
entries() {
    python3 -S - "$T/nodes.events" "$T/nodes.stamped" "${1:-node-1}" <<'PY'
import json, sys
key = "shim.containerd.x-k8s.io/held_demo"
last = None
for event, stamp in zip(open(sys.argv[1]), open(sys.argv[2])):
    obj = json.loads(event)["object"]
    text = (obj["metadata"].get("annotations") or {}).get(key)
    if obj["metadata"]["name"] != sys.argv[3] or text is None or text == last:
        continue
    last = text
    entry = json.loads(text)
    print(stamp.split()[0], entry.get("renewed", "-"), entry.get("committing", 0))
PY
}
first_mark() { entries "$@" | awk '$3 > 0 {print $1; exit}'; } # [NODE]
first_after_mark() { entries "$@" | awk -v at="$(first_mark "$@")" 'at != "" && $1 > at {print $1; exit}'; }
marked() { [[ -n "$(first_mark "$@")" ]]; }
written_after_mark() { [[ -n "$(first_after_mark "$@")" ]]; }

echo "--- node-1 takes the slot, marks it committing and stops at its first change"
kube_shim_yaml demo "$SERVER_URL/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")" \
    "  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: 1}}" | kube_admin apply -f - >/dev/null
kube_wait_for 60 reached node-1 links || fail "node-1 never reached its first change: $(tail -n 20 "$T/roots/node-1.log")"
kill -CONT "${ROLLOUT_PIDS[node-2]}"
kube_wait_for 10 marked || fail "no committing mark of node-1 in the record: $(entries)"
mark=$(first_mark)
read -r _ _ allowance < <(entries | awk '$3 > 0' | head -n 1)
[[ $allowance == 30 ]] || fail "node-1's mark states $allowance s, not 30: $(entries)"
pass "node-1 holds demo-slot-0, marked committing for $allowance s"

echo "--- held past its point of no return: no write until the allowance has passed, then a renewal"
kube_wait_for 45 written_after_mark || fail "node-1 did not renew its slot within 45 s of its mark: $(entries)"
gap=$(python3 -S -c 'import sys; print(round(float(sys.argv[2]) - float(sys.argv[1]), 1))' "$mark" "$(first_after_mark)")
python3 -S -c 'import sys; sys.exit(not 29.5 <= float(sys.argv[1]) <= 40)' "$gap" ||
    fail "node-1's first write after its mark came $gap s after it, not 30 to 40 s: $(entries)"
pass "node-1's first write after its mark came $gap s after it"

echo "--- still held a lease and the allowance after the mark: the slot stays node-1's"
holder() { kube_admin get lease demo-slot-0 -n shimkeeper-system -o jsonpath='{.spec.holderIdentity}' 2>/dev/null; }
# Sampled each second until 55 s after the mark: without the renewal the coordinator would revoke
# the slot 45 s after it.
while python3 -S -c 'import sys, time; sys.exit(time.time() - float(sys.argv[1]) >= 55)' "$mark"; do
    [[ "$(holder)" == node-1 ]] || fail "node-1's slot went while its transaction was held: held by '$(holder)'"
    sleep 1 # sampling the slot for the whole span, not waiting on a condition
done
if grep -h "revoked rollout slot Lease demo-slot-0" "$T"/coord-*.log; then
    fail "a coordinator revoked node-1's slot while its transaction was held"
fi
touch "$release"
kube_wait_for 60 rollout_finished_on demo 1 node-1 || fail "node-1 did not finish demo: $(rollout_annotation node-1 demo)"
echo "node-1's entry, each change: $(entries | tr '\n' ';')"
pass "node-1 kept its slot for 55 s past its mark, renewing after the allowance, and finished demo"

echo "--- node-2 held after its write-ahead, before its last check, for longer than a slot is trusted"
kube_wait_for 60 reached node-2 planned || fail "node-2 never reached its write-ahead: $(tail -n 20 "$T/roots/node-2.log")"
kube_wait_for 10 marked node-2 || fail "no committing mark of node-2 in the record: $(entries node-2)"
mark2=$(first_mark node-2)
# Two renewals after the mark: more than 10 s (slot_timing::fresh_for) since it was confirmed.
renewed_twice() { (($(entries node-2 | awk -v at="$mark2" '$1 > at' | wc -l) >= 2)); }
kube_wait_for 20 renewed_twice || fail "node-2 did not renew its slot twice before its last check: $(entries node-2)"
touch "$T/release-node-2"
finished() { rollout_finished_on demo 1 node-1 node-2 && [[ -z "$(rollout_slot_holders)" ]]; }
kube_wait_for 60 finished || fail "node-2 did not finish demo: $(rollout_annotation node-2 demo); $(grep 'rollout:' "$T/roots/node-2.log" | tail -n 5)"
if grep "not changing Shim/demo" "$T/roots/node-2.log"; then
    fail "node-2 refused its change after its hold"
fi
reached node-2 links || fail "node-2 finished without its change"
report=$(rollout_check demo 1 "" --nodes "node-1 node-2") || fail "the rollout broke its bound: $report"
echo "$report"
echo "node-2's entry, each change: $(entries node-2 | tr '\n' ';')"
pass "node-2 renewed every 5 s before its last check, passed it and finished demo"
