# shellcheck shell=bash
# Debian's real prometheus-node-exporter for the metrics tests: only the textfile collector, on
# 127.0.0.1 at a free port, reading one directory. Source after common.sh (uses $T, sk_track).
#
#   node_exporter_start "$T/textfile"    # exports NODE_EXPORTER_URL
#   metric 'shimkeeper_transactions_total{result="committed"}'   # prints the value ("" if absent)

NODE_EXPORTER_BIN=${NODE_EXPORTER_BIN:-/usr/bin/prometheus-node-exporter}

# node_exporter_start DIR: starts node_exporter reading DIR; waits until /metrics answers.
node_exporter_start() {
    local dir=$1 port
    [[ -x $NODE_EXPORTER_BIN ]] || skip "$NODE_EXPORTER_BIN is missing (apt-get install prometheus-node-exporter)"
    command -v curl >/dev/null || skip "curl is missing"
    mkdir -p "$dir"
    # A port the kernel just handed out and released: free unless something grabs it meanwhile.
    port=$(python3 -S -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    "$NODE_EXPORTER_BIN" --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
        --collector.textfile --collector.textfile.directory="$dir" >"$T/node_exporter.log" 2>&1 &
    sk_track $!
    NODE_EXPORTER_URL="http://127.0.0.1:$port/metrics"
    local deadline=$((SECONDS + 10))
    until curl -fsS -o /dev/null "$NODE_EXPORTER_URL" 2>/dev/null; do
        ((SECONDS < deadline)) || fail "node_exporter did not answer on $NODE_EXPORTER_URL (log: $T/node_exporter.log)"
        sleep 0.05
    done
    export NODE_EXPORTER_URL
}

# node_exporter_scrape: one scrape into $T/metrics.txt (also returned on stdout).
node_exporter_scrape() {
    curl -fsS "$NODE_EXPORTER_URL" >"$T/metrics.txt" || fail "scraping $NODE_EXPORTER_URL failed"
    cat "$T/metrics.txt"
}

# metric SAMPLE: the value of one sample (name with labels exactly as exposed) in the last
# scrape, "" when absent.
metric() {
    awk -v name="$1" '$1 == name { print $2 }' "$T/metrics.txt"
}

# expect_metric SAMPLE VALUE: after a fresh scrape, SAMPLE has exactly VALUE; and node_exporter
# reports no error reading the textfile directory.
expect_metric() {
    local got
    got=$(metric "$1")
    [[ $got == "$2" ]] || fail "metric $1 is '${got}', expected $2 (scrape: $T/metrics.txt)"
}

# node_exporter_expect_clean: a scrape with node_textfile_scrape_error 0 and our file read.
node_exporter_expect_clean() {
    node_exporter_scrape >/dev/null
    [[ $(metric node_textfile_scrape_error) == 0 ]] ||
        fail "node_exporter reports a textfile scrape error: $(grep -i error "$T/node_exporter.log" | tail -3)"
}
