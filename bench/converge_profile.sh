# shellcheck shell=bash
# Where apply's time goes. bench_components (always run) times the programs apply starts, on
# their own. With BENCH_PROFILE=1, bench_profile runs, on the node the benchmark leaves behind:
#   - one `fetch` into an empty store under `strace -f -tt -T`, to compare with the converge;
#   - one converge (a new shim, as in bench_converge) under `strace -f -tt -T` (every syscall
#     with a timestamp and its duration, children included), and the same converge again under
#     `strace -f -c` (a per-syscall summary);
#   - one no-op apply under `strace -f -tt -T` and `strace -f -c`;
#   - one no-op apply with --log-level debug, each stderr line stamped with the wall clock.
# Files land in DIR (printed at the end); converge_profile_summary.py turns a -tt -T trace into
# the phases a reader cares about (exec and dynamic loading, config reads, download, unpack,
# restart job, health calls, fsyncs).
# strace slows every syscall: read the traces for where time goes, not for absolute figures.

# bench_component LABEL RUNS CMD...: one table row, the median wall and CPU time of CMD.
bench_component() {
    local label=$1 runs=$2 i
    shift 2
    local -a wall=() cpu=()
    for ((i = 1; i <= runs; i++)); do
        bench_timed "$T/component.out" "$@"
        ((BENCH_RC == 0)) || bench_die "$label: '$*' exited $BENCH_RC: $(cat "$T/component.out")"
        wall+=("$BENCH_WALL")
        cpu+=("$(bench_calc "$BENCH_USER + $BENCH_SYS")")
    done
    bench_row "  part: $label" "$(bench_median "${wall[@]}") ms, CPU $(bench_median "${cpu[@]}") ms" \
        "(info)"
}

# bench_components RUNS: what the programs shimkeeper starts cost on their own, measured
# directly (no strace): every apply asks `containerd --version`; a config change is checked with
# `containerd config dump` before the restart; the pre-flight runs the new shim with `-v`.
bench_components() {
    local runs=$1 containerd shim
    containerd=$(sed -n 's/^binary = "\(.*\)"$/\1/p' "$NODE_AGENT_CONFIG")
    shim=$NODE_STORE_DIR/bin/$(shim_binary_for bench)
    bench_log "parts: $runs x each program an apply starts"
    bench_component "/bin/true (spawning any process here)" "$runs" /bin/true
    bench_component "shimkeeper version (start-up, dynamic loading)" "$runs" "$SHIMKEEPER" version
    bench_component "containerd --version (every apply)" "$runs" "${containerd:-containerd}" --version
    bench_component "containerd config dump (before a restart)" "$runs" \
        "${containerd:-containerd}" --config "$NODE_CONFIG" config dump
    bench_component "shim -v (pre-flight of a new artifact)" "$runs" env -i "$shim" -v
}

# bench_profile_converge_once TAG OUT: declares a new shim and applies it, under strace.
bench_profile_converge_once() {
    local tag=$1 out=$2
    shift 2
    node_shim_declare bench "$tag"
    bench_wait_restart_spacing
    strace "$@" -o "$out" "$SHIMKEEPER" -c "$NODE_AGENT_CONFIG" apply >"$out.stdout" 2>&1 ||
        bench_die "profiled apply ($tag) failed: $(cat "$out.stdout")"
    grep -q '^Committed generation' "$out.stdout" ||
        bench_die "profiled apply ($tag) did not commit: $(cat "$out.stdout")"
}

# bench_profile_stamp: copies stdin to stdout, each line prefixed with the wall clock (s.us).
bench_profile_stamp() {
    local line
    while IFS= read -r line; do
        printf '%s %s\n' "$EPOCHREALTIME" "$line"
    done
}

bench_profile() {
    local dir=$1
    command -v strace >/dev/null || {
        bench_note "BENCH_PROFILE=1: strace is not installed (apt-get install strace); no profile"
        return 0
    }
    rm -rf "$dir"
    mkdir -p "$dir"
    bench_log "profile: one converge and one no-op under strace into $dir"
    node_shim_declare bench p0 # the fetch alone, into an empty store, for comparison
    strace -f -tt -T -s 200 -o "$dir/fetch.trace" "$SHIMKEEPER" \
        -c "$(bench_fetch_config "$T/fetch-p0" "$T/fetch-p0/store")" fetch >"$dir/fetch.trace.stdout" 2>&1 ||
        bench_die "profiled fetch failed: $(cat "$dir/fetch.trace.stdout")"
    bench_profile_converge_once p1 "$dir/converge.trace" -f -tt -T -s 200
    bench_profile_converge_once p2 "$dir/converge.summary" -f -c
    bench_wait_restart_spacing
    strace -f -tt -T -s 200 -o "$dir/noop.trace" "$SHIMKEEPER" -c "$NODE_AGENT_CONFIG" apply \
        >"$dir/noop.trace.stdout" 2>&1 || bench_die "profiled no-op apply failed"
    strace -f -c -o "$dir/noop.summary" "$SHIMKEEPER" -c "$NODE_AGENT_CONFIG" apply \
        >"$dir/noop.summary.stdout" 2>&1 || bench_die "profiled no-op apply failed"
    local start
    start=$EPOCHREALTIME
    {
        "$SHIMKEEPER" -c "$NODE_AGENT_CONFIG" --log-level debug apply 2>&1 1>&3 |
            bench_profile_stamp >"$dir/noop.debug.log"
    } 3>"$dir/noop.debug.stdout"
    printf 'started %s\n' "$start" >>"$dir/noop.debug.log"
    python3 "$BENCH_DIR/converge_profile_summary.py" "$dir/fetch.trace" >"$dir/fetch.phases"
    python3 "$BENCH_DIR/converge_profile_summary.py" "$dir/converge.trace" >"$dir/converge.phases"
    LD_DEBUG=statistics "$SHIMKEEPER" version >/dev/null 2>"$dir/loader.statistics"
    bench_note "shimkeeper maps $(ldd "$SHIMKEEPER" | wc -l) shared objects; the dynamic loader's" \
        "own statistics are in $dir/loader.statistics"
    python3 "$BENCH_DIR/converge_profile_summary.py" "$dir/noop.trace" >"$dir/noop.phases"
    bench_note "profile written to $dir (converge.phases and noop.phases summarise the traces)"
}
