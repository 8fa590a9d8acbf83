#!/usr/bin/env bash
# The daemon writes the metrics after each reconcile too, and it and `apply` (separate
# processes) add to the same counters: Debian's real node_exporter reads one file whose
# committed count goes 1 (daemon, first run), 2 (daemon, a new drop-in), 3 (a manual apply
# removing a shim). Files only (--no-restart on an image-like root): no containerd needed.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_exporter.sh"
sk_init
command -v containerd >/dev/null || skip "containerd is missing"

mkdir -p "$T/www" "$ROOT/etc/containerd" "$ROOT/var/lib/prometheus/node-exporter"
containerd config default >"$ROOT/etc/containerd/config.toml"
for name in demo second; do
    make_shim_archive "$(shim_binary_for "$name")" "$T/www/$name.tar.gz"
done
sk_start_server "$T/www"
# The default textfile directory, under --root.
node_exporter_start "$ROOT/var/lib/prometheus/node-exporter"
write_shim_toml "$ROOT/etc/shimkeeper/shims.d/10-demo.toml" demo demo "$SERVER_URL/demo.tar.gz" \
    "$(sha256_of "$T/www/demo.tar.gz")"

"$SHIMKEEPER" --root "$ROOT" run --no-restart >"$T/daemon.log" 2>&1 &
daemon=$!
sk_track "$daemon"
committed() {
    node_exporter_scrape >/dev/null
    [[ $(metric 'shimkeeper_transactions_total{result="committed"}') == "$1" ]]
}
wait_committed() {
    local deadline=$((SECONDS + 60))
    until committed "$1"; do
        ((SECONDS < deadline)) || fail "committed never reached $1: $(cat "$T/metrics.txt" "$T/daemon.log")"
        sleep 0.1
    done
}
wait_committed 1
expect_metric shimkeeper_shims_installed 1

write_shim_toml "$ROOT/etc/shimkeeper/shims.d/20-second.toml" second second "$SERVER_URL/second.tar.gz" \
    "$(sha256_of "$T/www/second.tar.gz")"
wait_committed 2
expect_metric shimkeeper_shims_installed 2

# A manual apply (another process) while the daemon also sees the change: one of them commits,
# the other finds nothing to do; either way the shared counter says 3.
rm "$ROOT/etc/shimkeeper/shims.d/20-second.toml"
expect_exit 0 sk apply --no-restart
wait_committed 3
expect_metric shimkeeper_shims_installed 1
expect_metric 'shimkeeper_transactions_total{result="failed"}' 0
expect_metric shimkeeper_containerd_restarts_total 0
node_exporter_expect_clean
kill -TERM "$daemon"
wait "$daemon" || fail "the daemon did not stop cleanly: $(cat "$T/daemon.log")"
[[ $(python3 -S -c 'import json,sys; print(json.load(open(sys.argv[1]))["transactions"]["committed"])' \
    "$ROOT/var/lib/shimkeeper/state/metrics.json") == 3 ]] || fail "state/metrics.json does not hold 3 commits"
