#!/usr/bin/env bash
# The last check before a node's first change comes after its write-ahead and makes no request.
# One agent, node-1, talks to the API server through a TCP proxy (tests/support/pausable_proxy.py);
# Shim demo, maxUpdate 1. node-1 takes the slot with its `installing` report, keeps its config's
# backup and the journal's before-state, and is held right there (its fault hook at step
# `planned`) while the proxy is paused, so that nothing it sends reaches the API server, until
# its slot was last confirmed more than two thirds of the lease ago (10 s, model/slot_timing.hpp).
# Then it goes on:
#   - it does not change: its steps end at `planned` (no `links`), and it says why (`not changing
#     Shim/demo generation 1: rollout slot demo-slot-0 was last confirmed by the API server ...`);
#   - the proxy back, it takes a slot again and installs demo; nothing is halted, and the bound
#     holds, counted from its transactions and from the API server's record.
# With the recheck left out (RolloutGate::attach without Node::recheck_before_change) node-1
# changes on the stale slot and this fails.
# seconds-about: 50
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
rollout_require_fault_build
rollout_testbed
export ROLLOUT_STEPS=$T/steps ROLLOUT_STAGE_AHEAD=true
: >"$ROLLOUT_STEPS"
release=$T/release-node-1
ROLLOUT_HOLD_UNTIL=$release ROLLOUT_HOLD_STEP=planned rollout_proxied_agent node-1 rollout=yes
proxy=$KUBE_PROXY
step_time() { awk -v s="$1" '$1 == "node-1" && $2 == s { print $3; exit }' "$ROLLOUT_STEPS"; }
log=$T/roots/node-1.log

kube_wait_for 60 coordinator_elected || fail "no coordinator was elected"
rollout_record
kube_shim_yaml demo "$SERVER_URL/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")" \
    "  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: 1}}" | kube_admin apply -f - >/dev/null
echo "--- node-1 takes the slot, keeps its write-ahead and is held before its first change"
reached_write_ahead() { [[ -n "$(step_time planned)" ]]; }
kube_wait_for 60 reached_write_ahead ||
    fail "node-1 never reached its write-ahead: $(tail -n 20 "$log")"
kill -USR1 "$proxy"
kube_wait_for 5 kube_proxy_is paused || fail "the proxy did not pause"
[[ "$(rollout_annotation node-1 demo)" == *'"state":"installing"'* ]] ||
    fail "node-1 reached its write-ahead without saying installing: $(rollout_annotation node-1 demo)"
planned_at=$(step_time planned)
# The slot was confirmed by the write before `planned`: trusted until 10 s after it (and the
# renewal due 5 s after it never gets through).
stale() { python3 -S -c "import sys, time; sys.exit(time.time() < $planned_at + 11)"; }
kube_wait_for 30 stale || fail "the clock did not pass $planned_at + 11"
pass "node-1 said installing, kept its write-ahead, and is cut off past its slot's trust"

echo "--- released: the last check refuses; node-1 stays as it was"
touch "$release"
refused() { grep -q "not changing Shim/demo generation 1: rollout slot demo-slot-0 was last confirmed by the API server" "$log"; }
kube_wait_for 30 refused || fail "node-1 did not stop before its first change: $(tail -n 30 "$log")"
grep -m1 "not changing Shim/demo" "$log"
! grep -q "^node-1 links " "$ROLLOUT_STEPS" ||
    fail "node-1 changed on a slot it could not trust: $(cat "$ROLLOUT_STEPS")"
[[ ! -e $T/roots/node-1/var/lib/shimkeeper/bin/containerd-shim-demo-v2 ]] ||
    fail "node-1 linked demo's binary although it refused its change"
pass "node-1 refused its change after the write-ahead, with nothing changed"

echo "--- the proxy back: node-1 takes a slot again and installs demo"
kill -USR2 "$proxy"
kube_wait_for 5 kube_proxy_is running || fail "the proxy did not resume"
kube_wait_for 120 rollout_finished_on demo 1 node-1 ||
    fail "node-1 did not finish: $(rollout_annotation node-1 demo); $(tail -n 20 "$log")"
! grep -q "marked failed" "$log" || fail "a stale slot halted the rollout: $(grep "marked failed" "$log")"
overlap=$(rollout_overlap 1 node-1) || fail "the transactions broke the bound: $overlap"
report=$(rollout_check demo 1 "" --nodes node-1) || fail "the API server's record: $report"
echo "$report"
pass "node-1 finished with a slot it took again; nothing halted, the bound held"
echo "PASS"
