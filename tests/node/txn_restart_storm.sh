#!/usr/bin/env bash
# Scenario 8: failing applies in a row never push containerd into systemd's start limit. Each
# apply makes two starts (the change, which fails, and the rollback). What an operator checks:
# every apply exits 1 and rolls back, and afterwards containerd.service is active, its Result is
# not start-limit-hit, and the shim installed before still works. Run twice: with the upstream
# unit's limit (16 starts in 60 s), and with a tight one (5 in 10 s) that three applies would trip
# if the restart guard did not space them; a control shows that the tight limit is real.
# What this proves is shimkeeper's (journal, daemon, restart guard), not a config format: the
# oldest and the newest containerd line are enough (keeps scripts/test inside its budget).
# containerd-lines: 1.6 2
# seconds-about: 35
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
node_up "$T/node"
node_shim_serve
node_shim_declare good v1
expect_exit 0 ski apply
expect_output_contains "Committed generation 1"

# containerd refuses to start while its config holds a runtimes.broken table.
node_unit_dropin 60-refuse-broken "[Service]
ExecStartPre=/bin/sh -c '! grep -rq \"runtimes\\.broken\" $NODE_CONFIG_DIR'"
node_shim_declare broken v1

check_unit_fine() {
    local what=$1
    [[ "$(node_unit_prop Result)" != start-limit-hit ]] ||
        fail "$what: containerd.service hit its start limit"
    node_unit_is_active ||
        fail "$what: containerd.service is $(node_unit_prop ActiveState)/$(node_unit_prop SubState)"
}

three_failing_applies() {
    local limit=$1 i
    for i in 1 2 3; do
        expect_exit 1 ski apply
        expect_output_contains "Rolled back"
        check_unit_fine "$limit, failing apply $i"
        echo "$limit: failing apply $i rolled back; containerd active," \
            "Result=$(node_unit_prop Result)"
    done
    node_wait_healthy || fail "$limit: containerd is not healthy after three failing applies"
    [[ "$(node_handler_presence good)" == present ]] ||
        fail "$limit: the shim installed before is $(node_handler_presence good)"
    [[ "$(node_handler_presence broken)" == absent ]] ||
        fail "$limit: the broken shim is $(node_handler_presence broken)"
    (($(node_starts) == 6)) ||
        fail "$limit: containerd.service started $(node_starts) times for three failing applies" \
            "(expected 6: one change and one rollback each)"
}

# start_spread: "<most starts in any 10 s window> <seconds from first to last start> <smallest
# gap between two starts>" over the starts logged since node_count_starts.
start_spread() {
    python3 -S -c 'import sys
times = sorted(float(line) for line in open(sys.argv[1]) if line.strip())
most = max(sum(1 for u in times if t <= u < t + 10) for t in times)
gaps = [b - a for a, b in zip(times, times[1:])]
print(most, "%.2f" % (times[-1] - times[0]), "%.2f" % min(gaps))' "$NODE_DIR/starts.log"
}

# --- The upstream unit's limit.
node_count_starts
three_failing_applies "StartLimitBurst=16/60s"

# --- A tight limit: three applies make 6 starts, one more than the limit allows in 10 s.
node_unit_dropin 70-tight-start-limit "[Unit]
StartLimitBurst=5
StartLimitIntervalSec=10s"
[[ "$(node_unit_prop StartLimitBurst)" == 5 ]] || fail "the tight start limit did not take effect"
node_count_starts
begin=$SECONDS
three_failing_applies "StartLimitBurst=5/10s"
read -r most span gap < <(start_spread)
echo "tight limit: at most $most starts in a 10 s window, $span s first to last, gaps >= $gap s"
# systemd fails the unit at the 6th start inside 10 s: the guard must keep any window below that,
# which for six starts means spreading them over more than 10 s, at least 2 s apart.
((most <= 5)) || fail "the guard let $most starts into one 10 s window (limit 5)"
awk -v s="$span" 'BEGIN { exit !(s > 10) }' ||
    fail "six starts within $span s: the guard did not wait for the start limit"
# The guard spaces its RestartUnit calls 2 s apart; a start is seen at ExecStartPre, after the
# stop that a restart of a running containerd does first (tens of ms idle, more under load).
awk -v g="$gap" 'BEGIN { exit !(g >= 1.5) }' || fail "two starts only $gap s apart (the guard spaces them 2 s)"
echo "tight limit: the three applies took $((SECONDS - begin)) s"

# --- Control: the same limit trips when restarts are not spaced, so the check above means
# something. Plain `systemctl restart` in a row, as a careless agent would do.
for _ in $(seq 10); do
    systemctl --user restart "$NODE_UNIT" >>"$T/control.log" 2>&1 || true
    echo "after restart: $(node_unit_prop ActiveState)/$(node_unit_prop SubState)" \
        "Result=$(node_unit_prop Result), starts: $(node_starts)" >>"$T/control.log"
    [[ "$(node_unit_prop Result)" == start-limit-hit ]] && break
done
[[ "$(node_unit_prop Result)" == start-limit-hit ]] ||
    fail "control: ten quick restarts did not hit the 5/10s start limit" \
        "(Result=$(node_unit_prop Result)); the tight-limit check proves nothing." \
        "Restarts: $(cat "$T/control.log")" \
        "Unit: $(systemctl --user status --no-pager -n 20 "$NODE_UNIT" 2>&1)"

# With the cause gone, apply finds the unit failed with start-limit-hit, clears it once
# (reset-failed) and restarts: the broken shim installs and containerd is active again.
node_unit_dropin 60-refuse-broken
expect_exit 0 ski apply
expect_output_contains "Committed generation 2"
check_unit_fine "after the control"
node_wait_healthy || fail "containerd is not healthy after the final apply"
[[ "$(node_handler_presence broken)" == present ]] ||
    fail "broken is $(node_handler_presence broken) after the final apply"
echo "ok: failing applies never tripped the start limit; containerd stayed active throughout"
