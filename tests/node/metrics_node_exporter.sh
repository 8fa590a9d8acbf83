#!/usr/bin/env bash
# Metrics as Prometheus sees them: Debian's real node_exporter (textfile collector only) reads
# the file shimkeeper writes after each transaction, on a real node (systemd + containerd). An
# apply, a failed apply (checksum mismatch: refused before any change), a rollback (containerd
# restarted but the handler never registered) and a converged apply each leave the counters a
# user would expect; each is a separate process, so the counters prove they survive between
# runs. node_exporter never reports a textfile scrape error.
# containerd-lines: 1.6
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_exporter.sh"
node_up "$T/node"
node_shim_serve
textfile="$T/textfile"
node_exporter_start "$textfile"
printf '\n[metrics]\ntextfile_dir = "%s"\n' "$textfile" >>"$NODE_AGENT_CONFIG"
node_health_timeout 8

# Before any transaction there is no file: node_exporter has nothing of ours.
node_exporter_expect_clean
[[ -z $(metric shimkeeper_shims_installed) ]] || fail "metrics before any run"

# 1. An apply that commits, with one containerd restart.
node_shim_declare good v1
before=$(date +%s)
expect_exit 0 ski apply
expect_output_contains "Committed generation 1"
node_exporter_expect_clean
expect_metric shimkeeper_shims_installed 1
expect_metric 'shimkeeper_transactions_total{result="committed"}' 1
expect_metric 'shimkeeper_transactions_total{result="failed"}' 0
expect_metric 'shimkeeper_transactions_total{result="rolled-back"}' 0
expect_metric shimkeeper_rollbacks_total 0
expect_metric shimkeeper_containerd_restarts_total 1
# node_exporter prints large values in exponent form: compare as numbers.
artifact_bytes=$(find "$NODE_STORE_DIR/store/sha256" -type f -printf '%s\n' | awk '{ s += $1 } END { print s }')
python3 -S -c 'import sys; sys.exit(0 if float(sys.argv[1]) == float(sys.argv[2]) > 1e6 else 1)' \
    "$(metric shimkeeper_store_bytes)" "$artifact_bytes" ||
    fail "shimkeeper_store_bytes is $(metric shimkeeper_store_bytes); the store's files hold $artifact_bytes bytes"
python3 -S - "$(metric shimkeeper_last_transaction_timestamp_seconds)" \
    "$(metric shimkeeper_last_transaction_duration_seconds)" "$before" <<'PY' || fail "last transaction time/duration wrong"
import sys, time
finished, duration, before = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
assert before - 1 <= finished <= time.time() + 1, (finished, before)
assert 0 < duration < 60, duration
PY
grep -q '^# TYPE shimkeeper_transactions_total counter' "$T/metrics.txt" || fail "no counter TYPE line"
[[ -z $(metric shimkeeper_cluster_connected) ]] || fail "a cluster metric outside cluster mode"

# 2. A failed apply: the artifact does not match its sha256; nothing changes, no restart.
node_shim_artifact bad v1
write_shim_toml "$NODE_SHIMS_D/20-bad.toml" bad bad "$SERVER_URL/bad-v1.tar.gz" "$(printf '0%.0s' {1..64})"
expect_exit 1 ski apply
node_exporter_expect_clean
expect_metric 'shimkeeper_transactions_total{result="failed"}' 1
expect_metric 'shimkeeper_transactions_total{result="committed"}' 1
expect_metric shimkeeper_containerd_restarts_total 1
expect_metric shimkeeper_shims_installed 1
rm "$NODE_SHIMS_D/20-bad.toml"

# 3. A rollback: containerd runs a frozen copy of its config, so the new handler never appears.
frozen=$(node_freeze_config "$NODE_DIR/frozen-config")
node_unit_dropin 60-frozen-config "[Service]
ExecStart=
ExecStart=$NODE_CONTAINERD --config $frozen"
node_shim_declare ghost v1
expect_exit 1 ski apply
expect_output_contains "Rolled back"
node_exporter_expect_clean
expect_metric 'shimkeeper_transactions_total{result="rolled-back"}' 1
expect_metric shimkeeper_rollbacks_total 1
expect_metric shimkeeper_containerd_restarts_total 3 # 1 + the change + the rollback
expect_metric shimkeeper_shims_installed 1
expect_metric 'shimkeeper_transactions_total{result="committed"}' 1
node_unit_dropin 60-frozen-config
rm "$NODE_SHIMS_D/10-ghost.toml"

# 4. A converged apply is no transaction: nothing counted, the file not even rewritten.
stamp=$(stat -c %y "$textfile/shimkeeper.prom")
expect_exit 0 ski apply
expect_output_contains "Nothing to do"
[[ $(stat -c %y "$textfile/shimkeeper.prom") == "$stamp" ]] || fail "a no-op apply rewrote the metrics"
node_exporter_expect_clean
expect_metric 'shimkeeper_transactions_total{result="committed"}' 1
[[ -z $(find "$textfile" -name '.*') ]] || fail "a temp file was left in $textfile: $(ls -A "$textfile")"
echo "ok: node_exporter reads shimkeeper's metrics after apply, a failed apply, a rollback and a no-op"
