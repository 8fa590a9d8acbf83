# shellcheck shell=bash
# bench/converge's three node phases: the floor (containerd restart-to-healthy alone), converge
# of one new shim, and the no-op apply. Sourced by bench/converge; needs converge_lib.sh, the
# node harness and node_shim.sh (artifact server, `node_shim_declare`).
#
# Why the phases look the way they do:
# - The floor is polled tightly (a CRI Status call right after the other, no backoff), so it is
#   the earliest moment anyone could call containerd healthy; shimkeeper's own health check backs
#   off from 50 ms and can only be later. That makes the overhead figure strict, not flattering.
# - Every converge installs a NEW shim (a fresh artifact, a new digest) into a node that does not
#   have it, then removes it again untimed, so each timed apply really downloads, unpacks, edits
#   the config and restarts.
# - shimkeeper's restart guard waits until 2 s have passed since its previous restart. That wait
#   is deliberate, not overhead: each timed apply starts only after the spacing has passed.

# bench_floor RUNS: sets BENCH_FLOOR (median ms, restart command to CRI RuntimeReady).
bench_floor() {
    local runs=$1 i before t0 t1 t2 deadline polls first_poll_ready=0
    local -a job_ms=() healthy_ms=() poll_ms=()
    bench_log "floor: $runs x (systemctl --user restart $NODE_UNIT, then CRI Status until RuntimeReady)"
    for ((i = 1; i <= runs; i++)); do
        # Our own restarts must not trip the unit's start limit (16 in 60 s) for later phases.
        systemctl --user reset-failed "$NODE_UNIT" 2>/dev/null || true
        before=$(node_unit_prop InvocationID)
        bench_now_us t0
        systemctl --user restart "$NODE_UNIT" # a Type=notify job ends at READY=1
        bench_now_us t1
        deadline=$((SECONDS + 30))
        polls=1
        until bench_cri_ready; do
            ((SECONDS < deadline)) || bench_die "floor run $i: CRI not ready 30 s after the restart"
            polls=$((polls + 1))
        done
        if ((polls == 1)); then
            first_poll_ready=$((first_poll_ready + 1))
        fi
        bench_now_us t2
        [[ $(node_unit_prop InvocationID) != "$before" ]] ||
            bench_die "floor run $i: InvocationID unchanged, containerd did not restart"
        job_ms+=("$(bench_ms_between "$t0" "$t1")")
        healthy_ms+=("$(bench_ms_between "$t0" "$t2")")
    done
    systemctl --user reset-failed "$NODE_UNIT" 2>/dev/null || true
    # What one poll costs on a healthy containerd: a fresh cri-client process, connect, one call.
    for ((i = 1; i <= runs; i++)); do
        bench_now_us t0
        bench_cri_ready || bench_die "CRI Status is not ready on a healthy containerd"
        bench_now_us t1
        poll_ms+=("$(bench_ms_between "$t0" "$t1")")
    done
    BENCH_FLOOR=$(bench_median "${healthy_ms[@]}")
    BENCH_FLOOR_JOB=$(bench_median "${job_ms[@]}")
    bench_row "floor: restart job alone (systemctl restart returns)" \
        "$(bench_median "${job_ms[@]}") ms ($(bench_minmax "${job_ms[@]}"))"
    bench_row "floor: restart to CRI RuntimeReady, median of $runs" \
        "$BENCH_FLOOR ms ($(bench_minmax "${healthy_ms[@]}"))" "reference"
    bench_note "One CRI Status poll from a fresh cri-client process costs $(bench_median "${poll_ms[@]}") ms" \
        "on a healthy containerd; the floor includes the last such poll. The first poll after" \
        "the restart job ended already found RuntimeReady in $first_poll_ready of $runs runs, so the" \
        "true floor lies between the job time and the figure above; the overhead is given for both."
}

# bench_fetch_config DIR STORE: an agent config in DIR like the node's, whose store is STORE and
# whose shims.d is the node's (a symlink: shims.d is found beside the config file).
bench_fetch_config() {
    local dir=$1 store=$2
    mkdir -p "$dir"
    ln -sfn "$NODE_SHIMS_D" "$dir/shims.d"
    sed "s#^dir = .*#dir = \"$store\"#" "$NODE_AGENT_CONFIG" >"$dir/shimkeeper.toml"
    grep -q "^dir = \"$store\"" "$dir/shimkeeper.toml" ||
        bench_die "cannot point a copy of $NODE_AGENT_CONFIG at the store $store"
    printf '%s\n' "$dir/shimkeeper.toml"
}

# bench_apply_json_field FILE FIELD: a top-level field of `apply -o json`'s answer in FILE.
bench_apply_json_field() {
    python3 -S -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}

# bench_converge RUNS: sets BENCH_CONVERGE, BENCH_FETCH, BENCH_OVERHEAD (medians, ms). Leaves the
# last shim installed, for the no-op phase.
bench_converge() {
    local runs=$1 i url config before out curl_s
    local -a apply_ms=() fetch_ms=() curl_ms=() minus_fetch=() apply_cpu=()
    local link=$NODE_STORE_DIR/bin/$(shim_binary_for bench)
    bench_log "converge: $runs x (new shim from $SERVER_URL: fetch alone, then apply)"
    for ((i = 1; i <= runs; i++)); do
        node_shim_declare bench "r$i"
        url=$SERVER_URL/bench-r$i.tar.gz
        # The download alone, twice: plain curl, and shimkeeper fetch into an empty store
        # (download + sha256 + unpack + pre-flight, everything apply does before it edits).
        curl_s=$(curl -sS -o /dev/null -w '%{time_total}' "$url")
        curl_ms+=("$(bench_calc "$curl_s * 1000")")
        config=$(bench_fetch_config "$T/fetch-$i" "$T/fetch-$i/store")
        bench_timed "$T/fetch-$i.out" "$SHIMKEEPER" -c "$config" fetch
        ((BENCH_RC == 0)) || bench_die "fetch run $i failed: $(cat "$T/fetch-$i.out")"
        fetch_ms+=("$BENCH_WALL")

        bench_wait_restart_spacing
        before=$(node_unit_prop InvocationID)
        out=$T/apply-$i.json
        bench_timed "$out" "$SHIMKEEPER" -c "$NODE_AGENT_CONFIG" -o json apply
        ((BENCH_RC == 0)) || bench_die "apply run $i exited $BENCH_RC: $(cat "$out")"
        [[ $(bench_apply_json_field "$out" result) == committed ]] ||
            bench_die "apply run $i did not commit: $(cat "$out")"
        [[ $(bench_apply_json_field "$out" restarts) == 1 ]] ||
            bench_die "apply run $i restarted containerd $(bench_apply_json_field "$out" restarts) times"
        [[ $(node_unit_prop InvocationID) != "$before" ]] ||
            bench_die "apply run $i: containerd's InvocationID did not change"
        [[ $(node_handler_binary bench) == "$link" ]] ||
            bench_die "apply run $i: CRI reports handler bench -> '$(node_handler_binary bench)'"
        apply_ms+=("$BENCH_WALL")
        apply_cpu+=("$(bench_calc "$BENCH_USER + $BENCH_SYS")")
        minus_fetch+=("$(bench_calc "$BENCH_WALL - ${fetch_ms[-1]}")")

        if ((i < runs)); then # back to a node without the shim, untimed
            rm -f "$NODE_SHIMS_D/10-bench.toml"
            ski apply >"$T/remove-$i.out" 2>&1 || bench_die "removal $i failed: $(cat "$T/remove-$i.out")"
        fi
    done
    BENCH_CONVERGE=$(bench_median "${apply_ms[@]}")
    BENCH_FETCH=$(bench_median "${fetch_ms[@]}")
    BENCH_OVERHEAD=$(bench_calc "$(bench_median "${minus_fetch[@]}") - $BENCH_FLOOR")
    local size
    size=$(stat -c %s "$T/artifacts/bench-r$runs.tar.gz")
    bench_row "converge: apply, one new shim ($((size / 1024)) KiB tar.gz), median" \
        "$BENCH_CONVERGE ms ($(bench_minmax "${apply_ms[@]}"))"
    bench_row "converge: its CPU time (user+sys), median" "$(bench_median "${apply_cpu[@]}") ms"
    bench_row "download alone: curl, median" "$(bench_median "${curl_ms[@]}") ms"
    bench_row "download alone: shimkeeper fetch, empty store, median" \
        "$BENCH_FETCH ms ($(bench_minmax "${fetch_ms[@]}"))"
    bench_row "converge overhead = apply - fetch - floor" "$BENCH_OVERHEAD ms" "<= 50 ms" \
        "$(bench_verdict "$BENCH_OVERHEAD" 50)"
    bench_row "  same, strict: floor = restart job alone" \
        "$(bench_calc "$(bench_median "${minus_fetch[@]}") - $BENCH_FLOOR_JOB") ms" "(info)"
    bench_row "  same, counting only curl as the download" \
        "$(bench_calc "$BENCH_CONVERGE - $(bench_median "${curl_ms[@]}") - $BENCH_FLOOR") ms" \
        "(info)"
}

# bench_noop RUNS: apply on a converged node, RUNS times: wall and CPU time, and proof that it
# wrote nothing and restarted nothing.
bench_noop() {
    local runs=$1 i out snapshot_before id_before
    local -a wall=() cpu=()
    bench_log "no-op: $runs x apply on the converged node"
    bench_wait_restart_spacing
    snapshot_before=$(bench_node_snapshot)
    id_before=$(bench_unit_identity)
    for ((i = 1; i <= runs; i++)); do
        out=$T/noop-$i.out
        bench_timed "$out" "$SHIMKEEPER" -c "$NODE_AGENT_CONFIG" apply
        ((BENCH_RC == 0)) || bench_die "no-op apply $i exited $BENCH_RC: $(cat "$out")"
        grep -q '^Nothing to do' "$out" || bench_die "apply $i was not a no-op: $(cat "$out")"
        wall+=("$BENCH_WALL")
        cpu+=("$(bench_calc "$BENCH_USER + $BENCH_SYS")")
    done
    local writes=0 restarts=0 changed
    changed=$(diff <(printf '%s\n' "$snapshot_before") <(bench_node_snapshot) | grep -c '^>' || true)
    writes=$changed
    [[ $(bench_unit_identity) == "$id_before" ]] || restarts=1
    if ((writes > 0)); then
        bench_note "no-op wrote: $(diff <(printf '%s\n' "$snapshot_before") <(bench_node_snapshot) | grep '^>' | head -n 5 | tr '\n' ';')"
    fi
    local wall_med cpu_med
    wall_med=$(bench_median "${wall[@]}")
    cpu_med=$(bench_median "${cpu[@]}")
    bench_row "no-op apply: wall time, median of $runs" "$wall_med ms ($(bench_minmax "${wall[@]}"))" \
        "<= 20 ms" "$(bench_verdict "$wall_med" 20)"
    bench_row "no-op apply: CPU time (user+sys), median of $runs" \
        "$cpu_med ms ($(bench_minmax "${cpu[@]}"))" "<= 20 ms" "$(bench_verdict "$cpu_med" 20)"
    bench_row "no-op apply: entries written (store, state, journal, config)" "$writes" "0" \
        "$( ((writes == 0)) && echo met || echo "NOT MET")"
    bench_row "no-op apply: containerd restarts (InvocationID, MainPID)" "$restarts" "0" \
        "$( ((restarts == 0)) && echo met || echo "NOT MET")"
}
