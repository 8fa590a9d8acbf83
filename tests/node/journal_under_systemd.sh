#!/usr/bin/env bash
# journald fields end to end under a real systemd: a private systemd-journald (Debian's, on the
# tmpfs /run/systemd of the harness' mount namespace, /run/log and /var/log/journal on fresh
# tmpfs) and the harness' real systemd --user manager. shimkeeper apply runs as a unit of that
# manager (systemd-run --user --wait), so systemd itself connects its stderr to the journal and
# sets JOURNAL_STREAM; journalctl then finds the shim's record by SHIM=demo with HANDLER, DIGEST,
# TXN and PRIORITY, sent natively (_TRANSPORT=journal), and no duplicate as a stderr line
# (_TRANSPORT=stdout). Left for the booted node: `-u shimkeeper` (a system unit's _SYSTEMD_UNIT).
# The logging does not depend on the containerd line: one line is enough.
# containerd-lines: 1.6
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/node_scenario.sh" "$@"
[[ -x /lib/systemd/systemd-journald ]] || skip "systemd-journald is missing (Debian's systemd)"
mkdir -p /run/log /var/log/journal
mount -t tmpfs tmpfs /run/log
mount -t tmpfs tmpfs /var/log/journal # never the host's persistent journal
mkdir -p /run/systemd/journal
/lib/systemd/systemd-journald >"$T/journald.log" 2>&1 &
sk_track $!
node_wait_for 10 test -S /run/systemd/journal/stdout || fail "journald did not listen"

node_up "$T/node"
node_shim_serve
node_shim_declare demo v1
systemd-run --user --wait --quiet --unit shimkeeper-apply -- \
    "$SHIMKEEPER" -c "$NODE_AGENT_CONFIG" apply || fail "apply as a unit failed: $(journalctl -D /run/log/journal --no-pager | tail -20)"
txn=$(node_journal_field id)

records() {
    journalctl -D /run/log/journal --no-pager -o json "$@"
}
has_demo_record() { [[ -n $(records SHIM=demo) ]]; }
node_wait_for 10 has_demo_record || fail "no record with SHIM=demo: $(records | tail -5)"
records SHIM=demo >"$T/demo.json"
records SYSLOG_IDENTIFIER=shimkeeper >"$T/all.json"
python3 -S - "$T/demo.json" "$T/all.json" "$txn" "$(node_shim_digest demo v1)" <<'PY' || fail "journal records: $(cat "$T/demo.json")"
import json, sys
records = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
every = [json.loads(l) for l in open(sys.argv[2]) if l.strip()]
assert len(records) == 1, records
r = records[0]
assert r["_TRANSPORT"] == "journal", r          # sd_journal_send, chosen because systemd set JOURNAL_STREAM
assert r["SYSLOG_IDENTIFIER"] == "shimkeeper", r
assert r["PRIORITY"] == "6", r
assert r["HANDLER"] == "demo", r
assert r["TXN"] == sys.argv[3], (r["TXN"], sys.argv[3])
assert "install of handler demo" in r["MESSAGE"], r
assert r["DIGEST"] == "sha256:" + sys.argv[4], (r["DIGEST"], sys.argv[4])
assert not any(e.get("_TRANSPORT") == "stdout" and "install of handler" in e["MESSAGE"] for e in every), \
    "the record was also written to stderr as a line"
PY
echo "ok: under systemd, shimkeeper's records reach the journal with SHIM/HANDLER/DIGEST/TXN"
