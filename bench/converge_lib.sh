# shellcheck shell=bash
# bench/converge's arithmetic, table and node probes. Sourced by bench/converge after the node
# harness (tests/support/node_harness.sh), so NODE_* and `ski` are there.
#
# Times are kept in milliseconds with two decimals; bash has no floating point, so awk does the
# sums and medians. Wall clocks come from $EPOCHREALTIME (no fork), CPU time from wait4() via
# converge_timeit.py.

BENCH_ROWS=()   # "label|value|goal|verdict" lines for the final table
BENCH_NOTES=()  # free text printed under the table

bench_log() { printf '[bench] %s\n' "$*" >&2; }

bench_die() {
    printf 'bench/converge: %s\n' "$*" >&2
    exit 1
}

# bench_now_us VAR: microseconds since the epoch into VAR.
bench_now_us() {
    printf -v "$1" '%s' "${EPOCHREALTIME/[.,]/}"
}

# bench_ms_between START_US END_US: milliseconds, two decimals.
bench_ms_between() {
    local us=$(($2 - $1))
    printf '%d.%02d\n' $((us / 1000)) $((us % 1000 / 10))
}

# bench_median VALUES...: the median (the mean of the two middle values for an even count).
bench_median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
        END { if (NR == 0) { print "n/a"; exit }
              if (NR % 2) printf "%.2f\n", v[(NR + 1) / 2]
              else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# bench_minmax VALUES...: "min-max" for the table's spread column.
bench_minmax() {
    printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%s-%s\n", lo, hi }'
}

# bench_calc EXPR: evaluates an awk arithmetic expression, two decimals.
bench_calc() {
    awk "BEGIN { printf \"%.2f\\n\", $1 }"
}

# bench_verdict VALUE GOAL: "met" when VALUE <= GOAL.
bench_verdict() {
    awk -v v="$1" -v g="$2" 'BEGIN { print (v + 0 <= g + 0) ? "met" : "NOT MET" }'
}

# bench_row LABEL VALUE [GOAL [VERDICT]]: one line of the final table.
bench_row() {
    BENCH_ROWS+=("$1|$2|${3:--}|${4:-}")
}

bench_note() {
    BENCH_NOTES+=("$*")
}

bench_print_table() {
    local row label value goal verdict
    printf '\n%-58s %-22s %-12s %s\n' "figure" "measured" "goal" "verdict"
    printf '%-58s %-22s %-12s %s\n' "------" "--------" "----" "-------"
    for row in "${BENCH_ROWS[@]}"; do
        IFS='|' read -r label value goal verdict <<<"$row"
        printf '%-58s %-22s %-12s %s\n' "$label" "$value" "$goal" "$verdict"
    done
    if ((${#BENCH_NOTES[@]} > 0)); then
        printf '\n'
        printf -- '- %s\n' "${BENCH_NOTES[@]}"
    fi
}

# bench_timed OUT_FILE CMD...: runs CMD, sets BENCH_WALL, BENCH_USER, BENCH_SYS (ms), BENCH_RC.
bench_timed() {
    local line
    line=$(python3 "$BENCH_DIR/converge_timeit.py" "$@") || bench_die "converge_timeit.py failed on: ${*:2}"
    read -r BENCH_WALL BENCH_USER BENCH_SYS BENCH_RC <<<"$line"
}

# bench_cri_ready: one CRI Status call answers with RuntimeReady=true.
bench_cri_ready() {
    node_cri_client status 2>/dev/null | grep -q $'^runtime_ready\ttrue$'
}

# bench_node_snapshot: everything shimkeeper could write on this node (the store with its state
# and journal, the bin links, containerd's config folder), one line per entry with its mtime in
# nanoseconds, size and link target. Two equal snapshots mean nothing was written.
bench_node_snapshot() {
    # state/lock is not counted: every run takes the node lock and records its pid there.
    find "$NODE_STORE_DIR" "$(dirname "$NODE_CONFIG")" "$NODE_DIR/etc/shimkeeper" \
        -path "$NODE_STORE_DIR/state/lock" -prune -o -printf '%p %y %s %T@ %C@ %l\n' | LC_ALL=C sort
}

# bench_unit_identity: what changes when containerd restarts.
bench_unit_identity() {
    printf '%s %s %s' "$(node_unit_prop InvocationID)" "$(node_unit_prop MainPID)" \
        "$(node_unit_prop NRestarts)"
}

# bench_wait_restart_spacing: shimkeeper's restart guard spaces restarts by 2 s (history in the
# store's state/restarts.json, "<unit> <microseconds>" per line). A timed apply must not include
# that deliberate wait, so wait here until the spacing has passed since its last restart.
bench_wait_restart_spacing() {
    local history=$NODE_STORE_DIR/state/restarts.json last now
    [[ -s $history ]] || return 0
    local unit when
    last=0
    while read -r unit when; do # bash, not awk: mawk prints 16-digit integers as 1.7e+15
        [[ $unit == "$NODE_UNIT" ]] && last=$when
    done <"$history"
    [[ $last =~ ^[0-9]+$ ]] || bench_die "cannot read the last restart from $history"
    while :; do
        bench_now_us now
        ((now - last > 2100000)) && return 0
        ((now - last > -60000000)) || bench_die "$history holds a restart in the future: $last"
        sleep 0.05
    done
}
