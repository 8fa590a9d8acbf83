# shellcheck shell=bash
# bench/converge with BENCH_PROFILE=1: where one converge and one no-op apply spend their time.
# Runs, on the node the benchmark leaves behind:
#   - one converge (a new shim, as in bench_converge) under `strace -f -tt -T` (every syscall
#     with a timestamp and its duration, children included), and the same converge again under
#     `strace -f -c` (a per-syscall summary);
#   - one no-op apply under `strace -f -tt -T` and `strace -f -c`;
#   - one no-op apply with --log-level debug, each stderr line stamped with the wall clock.
# Files land in DIR (printed at the end); converge_profile_summary.py turns a -tt -T trace into
# the phases a reader cares about (exec and dynamic loading, config reads, download, unpack,
# restart job, health calls, fsyncs).
# strace slows every syscall: read the traces for where time goes, not for absolute figures.

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
    python3 "$BENCH_DIR/converge_profile_summary.py" "$dir/converge.trace" >"$dir/converge.phases"
    python3 "$BENCH_DIR/converge_profile_summary.py" "$dir/noop.trace" >"$dir/noop.phases"
    bench_note "profile written to $dir (converge.phases and noop.phases summarise the traces)"
}
