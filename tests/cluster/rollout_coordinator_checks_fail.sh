#!/usr/bin/env bash
# The rollout checks that judge the coordinator can fail. rollout_checks_fail.sh breaks the agents;
# here both `shimkeeper coordinate` candidates run deliberately broken (fault-injection builds,
# SHIMKEEPER_FAULT_SWITCH=grant-over-max,halt-ignored,slot-reclaim-early) and each check the rollout
# scenarios rely on must fail, saying what broke:
#   - grant-over-max (two slots granted for maxUpdate 1): rollout_check's bound on the holders at
#     once (rollout_timeline.py), which the agents' slot-wait never trips;
#   - halt-ignored (slots granted after one was marked failed): rollout_halt.sh's "no slot taken
#     after the failure" (rollout_no_slot_after);
#   - slot-reclaim-early (a slot revoked after half the lease, and freed half a lease after
#     that): rollout_crash.sh's takeover within 26 to 32 s of the dead holder's last renewal
#     (rollout_takeover_window).
# seconds-about: 70
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
"$SHIMKEEPER" -o json version | grep -q '"slot-reclaim-early"' ||
    { echo "skip: $SHIMKEEPER is not a -DSHIMKEEPER_FAULT_INJECTION=ON build"; exit 77; }
export SHIMKEEPER_FAULT_SWITCH=grant-over-max,halt-ignored,slot-reclaim-early
rollout_testbed # both candidates broken
unset SHIMKEEPER_FAULT_SWITCH
size=$(stat -c %s "$T/www/demo.tar.gz")
nodes=(node-1 node-2 node-3 node-4)
rollout_agents 1 4 rollout=yes

# Each generation needs a download (the failure and the kill happen during one): the same
# archive compressed otherwise (make_shim_archive's level is 1) is a new artifact.
zcat "$T/www/demo.tar.gz" | gzip -2 >"$T/www/demo2.tar.gz"
zcat "$T/www/demo.tar.gz" | gzip -9 >"$T/www/demo3.tar.gz"
[[ $(sha256_of "$T/www/demo2.tar.gz") != "$(sha256_of "$T/www/demo3.tar.gz")" ]] ||
    fail "the recompressed archives are the same"
# shim_yaml ARCHIVE SECONDS HANDLER: Shim demo, downloads of about SECONDS, maxUpdate 1.
shim_yaml() {
    kube_shim_yaml demo "$SERVER_URL/slow/$((size / $2))/$1" "$(sha256_of "$T/www/$1")" \
        "  handler: $3
  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: 1}}"
}
all_done() {
    rollout_finished_on demo "$1" "${nodes[@]}"
}
halted() { [[ "$(kube_admin get shim demo -o jsonpath='{.status.conditions[?(@.type=="RolloutHalted")].status}')" == True ]]; }
states() { for n in "${nodes[@]}"; do echo "$n $(rollout_annotation "$n" demo)"; done; }

kube_wait_for 60 coordinator_elected || fail "no coordinator was elected"
rollout_record

echo "--- grant-over-max: more holders at once than maxUpdate"
shim_yaml demo.tar.gz 1 demo | kube_admin apply -f - >/dev/null
kube_wait_for 120 all_done 1 || fail "generation 1 did not reach every node: $(states)"
expect_failure coordinator "rollout_check's bound" "more than 1 holders at once" rollout_check demo 1 "" \
    --nodes "${nodes[*]}"

echo "--- halt-ignored: slots granted after node-1 failed"
agent_toml=$T/roots/node-1/etc/shimkeeper/shimkeeper.toml
cp "$agent_toml" "$T/node-1-agent.toml"
printf '\n[fetch]\nmax_size = 1000\n' >>"$agent_toml"
# node-1 alone asks first: the others' grants come after its failure, or the check has nothing to
# catch (a grant made at once on each request could otherwise serve every node before it failed).
for node in "${nodes[@]:1}"; do kill -STOP "${ROLLOUT_PIDS[$node]}"; done
shim_yaml demo2.tar.gz 1 demo2 | kube_admin apply -f - >/dev/null
kube_wait_for 120 halted || fail "node-1's failure did not halt generation 2: $(states)"
for node in "${nodes[@]:1}"; do kill -CONT "${ROLLOUT_PIDS[$node]}"; done
read -r slot holder failed_rv <<<"$(rollout_failed_slot)"
[[ $holder == node-1 ]] || fail "the failed slot is held by '$holder', not node-1"
others_done() {
    rollout_finished_on demo 2 "${nodes[@]:1}"
}
kube_wait_for 120 others_done || fail "the broken coordinator did not go on granting: $(states)"
expect_failure coordinator "rollout_no_slot_after" "slots taken after the failure: node-" \
    rollout_no_slot_after "$failed_rv"
cp "$T/node-1-agent.toml" "$agent_toml"

echo "--- slot-reclaim-early: a dead holder's slot taken over before its lease ran out"
shim_yaml demo3.tar.gz 8 demo3 | kube_admin apply -f - >/dev/null # two nodes still wait when the slot is freed
rollout_kill_a_holder
expect_failure coordinator "rollout_takeover_window" "was taken over" rollout_takeover_window
