# shellcheck shell=bash
# bench/converge's last phase: the daemon (`shimkeeper run`) idle on a converged node, as a
# Type=notify unit of the node's systemd with the shipped unit's WatchdogSec. Sampled once READY=1
# has arrived and again after BENCH_IDLE_SECONDS:
#   memory   VmRSS, RssAnon, RssFile (/proc/PID/status) and Pss (/proc/PID/smaps_rollup);
#   wakeups  voluntary + nonvoluntary context switches summed over the process's threads;
#   CPU      run time from /proc/PID/task/*/schedstat (nanoseconds).
# VmRSS counts every page of the shared libraries the process maps (libcurl pulls in OpenSSL,
# nghttp2, Kerberos, LDAP, ...; bench/health_rss/RESULTS.md), most of them shared with other
# processes: RssAnon and Pss say what the daemon itself costs the node. All are printed.

# bench_idle_sample PID: "vmrss rssanon rssfile pss threads voluntary nonvoluntary cpu_ns".
bench_idle_sample() {
    local pid=$1
    local status=/proc/$pid/status
    local pss
    pss=$(awk '/^Pss:/ { print $2; exit }' "/proc/$pid/smaps_rollup")
    awk -v pss="$pss" '/^VmRSS:/ { r = $2 } /^RssAnon:/ { a = $2 } /^RssFile:/ { f = $2 }
        /^Threads:/ { t = $2 } END { printf "%s %s %s %s %s ", r, a, f, pss, t }' "$status"
    cat /proc/"$pid"/task/*/status | awk '
        /^voluntary_ctxt_switches:/ { v += $2 } /^nonvoluntary_ctxt_switches:/ { n += $2 }
        END { printf "%.0f %.0f ", v, n }'
    cat /proc/"$pid"/task/*/schedstat | awk '{ c += $1 } END { printf "%.0f\n", c }'
}

# bench_idle SECONDS: starts the daemon unit, samples, soaks, samples, stops it.
bench_idle() {
    local seconds=$1 unit=sk-bench-daemon.service watchdog pid containerd_before
    watchdog=$(sed -n 's/^WatchdogSec=//p' "$SHIMKEEPER_SOURCE_DIR/units/shimkeeper.service")
    watchdog=${watchdog:-3min}
    mkdir -p "$NODE_DIR/run/shimkeeper"
    cat >"$XDG_CONFIG_HOME/systemd/user/$unit" <<EOF
[Unit]
Description=shimkeeper run, idle benchmark on $NODE_DIR
After=$NODE_UNIT

[Service]
Type=notify
ExecStart=$SHIMKEEPER -c $NODE_AGENT_CONFIG run --status-file $NODE_DIR/run/shimkeeper/status.json
WatchdogSec=$watchdog
TimeoutStartSec=120s
StandardOutput=append:$NODE_DIR/log/daemon.log
StandardError=append:$NODE_DIR/log/daemon.log
EOF
    systemctl --user daemon-reload
    bench_wait_restart_spacing
    containerd_before=$(bench_unit_identity)
    bench_log "idle: starting $unit (Type=notify, WatchdogSec=$watchdog), then ${seconds}s idle"
    systemctl --user start "$unit" || bench_die "$unit did not reach READY=1: $(
        systemctl --user status --no-pager "$unit" 2>&1 | tail -n 5; tail -n 20 "$NODE_DIR/log/daemon.log")"
    pid=$(node_unit_prop MainPID "$unit")
    [[ $(node_unit_prop ActiveState "$unit") == active && $pid != 0 ]] ||
        bench_die "$unit is not active after start"
    local -a first last
    read -r -a first <<<"$(bench_idle_sample "$pid")"
    sleep "$seconds" # the measurement window itself, not a wait for a condition
    [[ $(node_unit_prop MainPID "$unit") == "$pid" ]] ||
        bench_die "$unit's main process changed during the idle window (watchdog or crash?)"
    read -r -a last <<<"$(bench_idle_sample "$pid")"
    local daemon_restarts containerd_after status_text
    daemon_restarts=$(node_unit_prop NRestarts "$unit")
    status_text=$(node_unit_prop StatusText "$unit")
    containerd_after=$(bench_unit_identity)
    systemctl --user stop "$unit"
    [[ $(node_unit_prop Result "$unit") == success ]] ||
        bench_note "the daemon did not stop cleanly: Result=$(node_unit_prop Result "$unit")"

    local mib=8 goal_kib=8192 switches voluntary nonvoluntary cpu_ms per_min
    voluntary=$((last[5] - first[5]))
    nonvoluntary=$((last[6] - first[6]))
    switches=$((voluntary + nonvoluntary))
    cpu_ms=$(bench_calc "(${last[7]} - ${first[7]}) / 1e6")
    per_min=$(bench_calc "$switches * 60 / $seconds")
    bench_row "daemon idle: VmRSS at READY / after ${seconds}s" "${first[0]} / ${last[0]} KiB" \
        "<= $mib MiB" "$(bench_verdict "${last[0]}" "$goal_kib")"
    bench_row "daemon idle: RssAnon (private memory) after ${seconds}s" "${last[1]} KiB" \
        "<= $mib MiB" "$(bench_verdict "${last[1]}" "$goal_kib")"
    bench_row "daemon idle: Pss (shared pages split) after ${seconds}s" "${last[3]} KiB" \
        "<= $mib MiB" "$(bench_verdict "${last[3]}" "$goal_kib")"
    bench_row "daemon idle: RssFile (mapped files) after ${seconds}s" "${last[2]} KiB" "(info)"
    bench_row "daemon idle: threads" "${last[4]}" "(info)"
    bench_row "daemon idle: wakeups (context switches) in ${seconds}s" \
        "$switches ($voluntary vol + $nonvoluntary invol), $per_min/min" "(no goal)"
    bench_row "daemon idle: CPU time in ${seconds}s" "$cpu_ms ms" "(no goal)"
    bench_row "daemon idle: containerd restarts, daemon restarts" \
        "$([[ $containerd_after == "$containerd_before" ]] && echo 0 || echo "1+"), $daemon_restarts" \
        "0, 0" "$([[ $containerd_after == "$containerd_before" && $daemon_restarts == 0 ]] &&
            echo met || echo "NOT MET")"
    bench_note "daemon STATUS= while idle: $status_text"
}
