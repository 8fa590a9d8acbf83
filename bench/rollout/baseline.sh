# shellcheck shell=bash
# bench/rollout/baseline.sh (sourced by bench/rollout/run): the starting figure the control
# plane's CPU per node is measured against, taken on this machine in the same bench run.
#
# The starting revision is the last one before a node's rollout writes moved onto its own Node
# (before it, a node created, renewed and released slot Leases of its own, and the admission
# policies confined those Lease writes). BENCH_BASELINE=REV measures another revision;
# BENCH_BASELINE=none skips it. The revision's own tree, bench and deploy/ manifests run with
# this run's Kubernetes peers (KUBE_BIN), so that the API server is the same and only
# shimkeeper's protocol and policies differ. Its bench predates slot times, kubelet credentials
# and CPU groups: it runs with the same agents, maxUpdate, download time, nice levels and
# staging, which is all a node's control-plane cost depends on.
BASELINE_DEFAULT_REV=bb75b4c

# baseline_binary REV: prints the folder of REV's source tree with REV's shimkeeper built in it
# (build/bench/src/shimkeeper), building it once per revision into the test cache.
baseline_binary() {
    local rev dir
    git -C "$SHIMKEEPER_SOURCE_DIR" rev-parse --git-dir >/dev/null 2>&1 || {
        echo "BENCH_BASELINE: $SHIMKEEPER_SOURCE_DIR is not a git checkout; the starting revision is read from its history" >&2
        return 1
    }
    rev=$(git -C "$SHIMKEEPER_SOURCE_DIR" rev-parse --verify --quiet "$1^{commit}") || {
        echo "BENCH_BASELINE: no commit '$1' in $SHIMKEEPER_SOURCE_DIR's history (a shallow clone lacks it)" >&2
        return 1
    }
    dir=${SHIMKEEPER_CACHE:-/var/cache/shimkeeper-test}/bench-baseline/$rev
    if [[ ! -x $dir/build/bench/src/shimkeeper ]]; then
        rm -rf "$dir" && mkdir -p "$dir"
        git -C "$SHIMKEEPER_SOURCE_DIR" archive "$rev" | tar -x -C "$dir"
        # Only the binary: its tests are not run here. Fault injection is what the bench's
        # builds have (the ci preset); it costs nothing unless a fault is named.
        if ! { cmake -S "$dir" -B "$dir/build/bench" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
            -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DSHIMKEEPER_FAULT_INJECTION=ON \
            -DSHIMKEEPER_BUILD_TESTS=OFF &&
            cmake --build "$dir/build/bench" --target shimkeeper; } >"$dir/build.log" 2>&1; then
            echo "BENCH_BASELINE: building $rev failed; see $dir/build.log" >&2
            return 1
        fi
    fi
    echo "$dir"
}

# baseline_bench_with_rest DIR: prints the path of a copy of DIR's bench/rollout/run that, just
# before its window opens, measures kube-apiserver and etcd at rest for BENCH_REST_SECONDS as this
# bench does (and prints "the control plane at rest: TICKS ticks in S s"); the rest of it as it
# was. Without BENCH_REST_SECONDS (0) the bench itself.
baseline_bench_with_rest() {
    local run=$1/bench/rollout/run seconds=${BENCH_REST_SECONDS:-10}
    if ((seconds == 0)); then
        echo "$run"
        return
    fi
    # The line that opens its window: its first scrape of the API server's metrics.
    awk -v seconds="$seconds" '
        /^metrics >"\$T\/m0"$/ && !inserted {
            print "control_at_rest() { echo $(($(cpu_of \"$KUBE_APISERVER_PID\") + $(cpu_of \"$KUBE_ETCD_PID\"))); }"
            print "rest_from=$(control_at_rest)"
            print "sleep " seconds
            print "echo \"the control plane at rest: $(($(control_at_rest) - rest_from)) ticks in " seconds " s\""
            inserted = 1
        }
        { print }
        END { exit !inserted }' "$run" >"$run-with-rest" || {
        echo "BENCH_BASELINE: no window opening in $run to measure the rest before" >&2
        echo "$run"
        return
    }
    chmod +x "$run-with-rest"
    echo "$run-with-rest"
}

# baseline_control_plane AGENTS MAX_UPDATE: runs the starting revision's bench/rollout/run and
# prints its kube-apiserver and etcd CPU seconds per node over the first rollout (nothing when
# skipped). Its own output goes to $T/baseline.log.
baseline_control_plane() {
    local rev=${BENCH_BASELINE:-$BASELINE_DEFAULT_REV} dir
    [[ $rev == none ]] && return 0
    dir=$(baseline_binary "$rev") || return 1
    echo "the starting revision $rev: its bench/rollout/run $1 $2 (output in $T/baseline.log)" >&2
    # Its bench sets SHIMKEEPER and SHIMKEEPER_SOURCE_DIR from its own tree; it keeps nothing.
    env -u BENCH_KEEP -u BENCH_PPROF SHIMKEEPER_BUILD_DIR="$dir/build/bench" KUBE_BIN="$KUBE_BIN" \
        "$(baseline_bench_with_rest "$dir")" "$1" "$2" >"$T/baseline.log" 2>&1 || {
        echo "BENCH_BASELINE: the starting revision's bench failed; see $T/baseline.log" >&2
        return 1
    }
    # Its control plane at rest and its window, for the rollout's own part (the run's figures).
    sed -n 's/^the control plane at rest: \([0-9]*\) ticks in \([0-9]*\) s$/\1 \2/p' \
        "$T/baseline.log" | head -n 1 >"$T/baseline.rest"
    sed -n 's/^the machine from apply to the poll that saw every node done (\([0-9.]*\) s.*/\1/p' \
        "$T/baseline.log" | head -n 1 >"$T/baseline.window"
    sed -n 's/^CPU during the rollout: kube-apiserver and etcd [0-9.]* s (\([0-9.]*\) s per node.*/\1/p' \
        "$T/baseline.log" | head -n 1
}
