#!/usr/bin/env bash
# Structured journal records for real: a private systemd-journald (Debian's binary, in a private
# mount namespace whose /run/systemd, /run/log and /var/log/journal are fresh tmpfs) receives
# what shimkeeper sends when JOURNAL_STREAM names its stderr, and journalctl then finds the
# shim's record by SHIM=demo with its HANDLER, DIGEST, TXN and PRIORITY. With JOURNAL_STREAM
# naming another stream (a wrapper redirected stderr) the same records are readable lines and
# the journal gets nothing. What is left for the booted node: `journalctl -u shimkeeper`, i.e.
# the unit's own stderr stream as systemd sets it up.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest}/tests/support/common.sh"
sk_init

[[ $(id -u) -eq 0 ]] || skip "needs root (a private mount namespace for journald)"
[[ -x /lib/systemd/systemd-journald ]] || skip "systemd-journald is missing (Debian's systemd)"
command -v journalctl >/dev/null || skip "journalctl is missing"
command -v containerd >/dev/null || skip "containerd is missing"

mkdir -p "$T/www" "$ROOT/etc/containerd"
make_shim_archive "$(shim_binary_for demo)" "$T/www/demo.tar.gz"
sk_start_server "$T/www"
containerd config default >"$ROOT/etc/containerd/config.toml"
sha="$(sha256_of "$T/www/demo.tar.gz")"
write_shim_toml "$ROOT/etc/shimkeeper/shims.d/10-demo.toml" demo demo "$SERVER_URL/demo.tar.gz" "$sha"

cat >"$T/inside.sh" <<'INSIDE'
set -euo pipefail
mount -t tmpfs tmpfs /run/systemd
mkdir -p /run/systemd/journal /run/log /var/log/journal
mount -t tmpfs tmpfs /run/log
mount -t tmpfs tmpfs /var/log/journal # never the host's persistent journal
/lib/systemd/systemd-journald >"$T/journald.log" 2>&1 &
journald=$!
trap 'kill $journald; wait $journald 2>/dev/null || true' EXIT
deadline=$((SECONDS + 10))
until [[ -S /run/systemd/journal/socket ]]; do
    ((SECONDS < deadline)) || { echo "journald did not listen" >&2; exit 1; }
    sleep 0.05
done
sk() { "$SHIMKEEPER" --root "$ROOT" "$@"; }

# The journal path: stderr is the stream JOURNAL_STREAM names.
exec 3>&2
exec 2>"$T/journal-stderr"
JOURNAL_STREAM="$(stat -c '%d:%i' "$T/journal-stderr")" sk apply --no-restart >"$T/apply.out"
exec 2>&3
cp "$ROOT/var/lib/shimkeeper/state/journal.json" "$T/install-journal.json"
# The lines path: JOURNAL_STREAM names a stream that is no longer stderr.
touch "$T/elsewhere"
rm "$ROOT/etc/shimkeeper/shims.d/10-demo.toml"
JOURNAL_STREAM="$(stat -c '%d:%i' "$T/elsewhere")" sk apply --no-restart >"$T/remove.out" 2>"$T/lines-stderr"

deadline=$((SECONDS + 10))
until journalctl -D /run/log/journal --no-pager -o json SHIM=demo >"$T/demo.json" && [[ -s "$T/demo.json" ]]; do
    ((SECONDS < deadline)) || break
    sleep 0.1
done
journalctl -D /run/log/journal --no-pager -o json SYSLOG_IDENTIFIER=shimkeeper >"$T/all.json"
INSIDE
SHIMKEEPER="$SHIMKEEPER" unshare -m --propagation private bash "$T/inside.sh" ||
    fail "the journal scenario failed (journald log: $T/journald.log)"

grep -q "Committed generation 1" "$T/apply.out" || fail "the apply did not commit: $(cat "$T/apply.out")"
# (download progress is plain stderr output of its own, not a log record: it may be there)
! grep -q "install of handler" "$T/journal-stderr" ||
    fail "with stderr as the journal, the record was written as a line too: $(cat "$T/journal-stderr")"
grep -q "demo: remove of handler demo" "$T/lines-stderr" ||
    fail "with JOURNAL_STREAM naming another stream, no readable line: $(cat "$T/lines-stderr")"

txn="$(python3 -S -c 'import json,sys; print(json.load(open(sys.argv[1]))["id"])' "$T/install-journal.json")"
python3 -S - "$T/demo.json" "$T/all.json" "$txn" <<'PY'
import json, sys
records = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
every = [json.loads(line) for line in open(sys.argv[2]) if line.strip()]
assert len(records) == 1, f"journalctl SHIM=demo found {len(records)} records: {records}"
r = records[0]
assert r["SYSLOG_IDENTIFIER"] == "shimkeeper", r
assert r["PRIORITY"] == "6", r
assert r["HANDLER"] == "demo", r
assert r["DIGEST"].startswith("sha256:") and len(r["DIGEST"]) == 71, r
assert r["TXN"] == sys.argv[3], (r["TXN"], sys.argv[3])
assert r["_TRANSPORT"] == "journal", r
assert "install of handler demo" in r["MESSAGE"], r
assert all("remove of handler" not in e["MESSAGE"] for e in every), "the lines run reached the journal"
PY
