#!/usr/bin/env bash
# Test 2 of the distro label: the .deb on a booted Debian 12 (systemd as PID 1 under nspawn,
# Debian's own containerd.service), everything through the SYSTEM bus. What an operator sees:
#   1. `apt-get install ./shimkeeper_*.deb`: shimkeeper.service active, Type=notify, a child of
#      PID 1; `systemd-analyze security` scores it at most 2.5;
#   2. a file dropped into shims.d/ converges without any command: containerd.service restarted
#      exactly once, the handler in CRI (as `shimkeeper status` reads it), a container run through
#      the installed shim; the install's journal record found by `journalctl -u shimkeeper
#      SHIM=demo` with its HANDLER, DIGEST, TXN and PRIORITY; the metrics as Debian's own
#      prometheus-node-exporter.service (under the same PID 1) serves them;
#   3. a change containerd refuses to start with is rolled back: config as before, handler kept;
#      the rollback is a warning in the journal and counted in the metrics;
#   3b. an upgrade (a newer version of the package) restarts the daemon; the node stays as it is;
#   4. `apt-get remove`: the daemon is gone, the shim still runs containers after a restart of
#      containerd; a purge now keeps the store and says how to finish;
#   5. reinstall, stop the daemon, `shimkeeper reset`, `apt-get purge`: containerd's config is
#      byte for byte what it was before the first install and no shimkeeper file is left
#      (node_exporter's shimkeeper.prom included: it would go on reporting an installed shim).
# seconds-about: 20
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/distro.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/debian_rootfs.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/booted_node.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_exporter.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/booted_journal.sh"
distro_init
deb=$(distro_packages | grep '\.deb$')

status=0
debian_rootfs_copy "$T/rootfs" || status=$?
((status == 0)) || { ((status == 77)) && skip "no Debian rootfs"; fail "no Debian rootfs"; }
root=$T/rootfs
cp "$deb" "$root/root/"
deb_in_node=/root/$(basename "$deb")
# What "restored" means: containerd's config folder as Debian's package left it.
config_before=$(tree_digest "$root/etc/containerd")

# The shims (the node's own runc shim renamed), a busybox rootfs for containers, containerd's
# starts counted. Test hook for step 3: containerd "fails to start" whenever its config holds
# runtimes.broken.
distro_serve_shims "$root" demo broken
distro_busybox_box "$root"
distro_count_containerd_starts "$root" - <<'EOF'
ExecStartPre=/bin/sh -c '! grep -rqs "runtimes\\.broken" /etc/containerd'
EOF

# Debian's node_exporter as packaged (its unit, its user, its default textfile directory, which
# is shimkeeper's default too); only where it listens is ours: nspawn shares the host's network,
# so a free port on 127.0.0.1, scraped from the host. Only the textfile collector: the others
# would read the host's /proc and /sys.
exporter_port=$(python3 -S -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
echo "ARGS=\"--web.listen-address=127.0.0.1:$exporter_port --collector.disable-defaults --collector.textfile\"" \
    >"$root/etc/default/prometheus-node-exporter"
NODE_EXPORTER_URL=http://127.0.0.1:$exporter_port/metrics

# expect_metric_over SAMPLE MIN: SAMPLE is above MIN (node_exporter writes big values as floats).
expect_metric_over() {
    local got
    got=$(metric "$1")
    awk -v got="$got" -v min="$2" 'BEGIN { exit !(got != "" && got + 0 > min + 0) }' ||
        fail "metric $1 is '$got', expected more than $2 (scrape: $T/metrics.txt)"
}

boot_node "$root"
boot__wait 30 curl -fsS -o /dev/null "$NODE_EXPORTER_URL" ||
    fail "the node's prometheus-node-exporter.service does not answer on $NODE_EXPORTER_URL:" \
        "$(boot_run journalctl -u prometheus-node-exporter --no-pager | tail -10)"
starts() { boot_run sh -c 'wc -l </run/containerd-starts'; }
run_through_shim() { distro_run_through_shim /var/lib/shimkeeper/bin/containerd-shim-demo-v2 "$1"; }
# --- 1. install: enabled, started, Type=notify under PID 1, hardened.
boot_run apt-get install -y -q "$deb_in_node" >"$T/install.log" 2>&1 ||
    fail "apt-get install failed: $(tail -20 "$T/install.log")"
[[ "$(boot_run systemctl is-enabled shimkeeper)" == enabled ]] || fail "shimkeeper.service not enabled"
[[ "$(boot_run systemctl is-active shimkeeper)" == active ]] ||
    fail "shimkeeper.service is $(boot_run systemctl is-active shimkeeper): $(boot_run journalctl -u shimkeeper --no-pager | tail -20)"
[[ "$(boot_run systemctl show -p Type --value shimkeeper)" == notify ]] || fail "not Type=notify"
pid=$(boot_run systemctl show -p MainPID --value shimkeeper)
[[ "$(boot_run ps -o ppid= -p "$pid" | tr -d ' ')" == 1 ]] || fail "the daemon's parent is not PID 1"
boot_run systemd-analyze security shimkeeper.service --threshold=25 --no-pager >"$T/security.out" 2>&1 ||
    fail "systemd-analyze security scores the unit above 2.5: $(tail -3 "$T/security.out")"

# --- 2. a drop-in converges through the system bus, one restart.
boot_run sh -c ': >/run/containerd-starts'
cat >"$T/10-demo.toml" <<EOF
[[shim]]
name = "demo"
handler = "demo"
runtime_type = "io.containerd.demo.v2"
binary = "containerd-shim-demo-v2"

[shim.fetch]
url = "$SERVER_URL/demo.tar.gz"
sha256 = "$(sha256_of "$T/artifacts/demo.tar.gz")"
EOF
cp "$T/10-demo.toml" "$root/etc/shimkeeper/shims.d/10-demo.toml"
converged() { boot_run shimkeeper status 2>/dev/null | grep -q "Current generation: 1"; }
boot__wait 60 converged || fail "the daemon did not converge on shims.d/10-demo.toml:" \
    "$(boot_run journalctl -u shimkeeper --no-pager | tail -20)"
(($(starts) == 1)) || fail "containerd.service started $(starts) times for one new shim"
boot_run shimkeeper status >"$T/status.out" 2>&1 || true
grep -q "handler demo: registered -> /var/lib/shimkeeper/bin/containerd-shim-demo-v2" "$T/status.out" ||
    fail "the running containerd's CRI does not list demo at the installed shim: $(cat "$T/status.out")"
out=$(run_through_shim c1) || fail "ctr run through the installed shim failed: $out"
[[ $out == "hello from c1" ]] || fail "the container printed: $out"
# The journal: one record for the install, with the fields the README lists.
journal_txn=$(last_txn_id "$root")
boot__wait 10 journal_has SHIM=demo "committed" ||
    fail "journalctl -u shimkeeper SHIM=demo has no committed record:" \
        "$(boot_run journalctl -u shimkeeper --no-pager -o verbose | tail -40)"
journal_expect "the install of demo" SHIM=demo "committed" -- \
    HANDLER=demo "DIGEST=sha256:$(sha256_of "$T/artifacts/demo.tar.gz")" "TXN=$journal_txn" PRIORITY=6
(($(journal_txns SHIM=demo committed) == 1)) || fail "more than one transaction committed demo"
# The metrics, as the node's own node_exporter serves them.
node_exporter_scrape >/dev/null
expect_metric node_textfile_scrape_error 0
expect_metric shimkeeper_shims_installed 1
expect_metric_over 'shimkeeper_transactions_total{result="committed"}' 0
expect_metric shimkeeper_containerd_restarts_total 1
expect_metric_over shimkeeper_store_bytes 0

# --- 3. a change containerd refuses: rolled back, the node as before.
config_with_demo=$(tree_digest "$root/etc/containerd")
sed -e 's/demo/broken/g' -e "s/^sha256 = .*/sha256 = \"$(sha256_of "$T/artifacts/broken.tar.gz")\"/" \
    "$T/10-demo.toml" >"$root/etc/shimkeeper/shims.d/20-broken.toml"
rolled_back() { boot_run shimkeeper status 2>/dev/null | grep -qi "rolled.back"; }
boot__wait 120 rolled_back || fail "the broken change was not rolled back:" \
    "$(boot_run journalctl -u shimkeeper --no-pager | tail -20)"
# The daemon retries with backoff; stopping it lets a retry in flight finish or roll back, so the
# node is looked at while nothing changes it.
boot_run systemctl stop shimkeeper
[[ "$(tree_digest "$root/etc/containerd")" == "$config_with_demo" ]] ||
    fail "containerd's config is not as before the broken change"
[[ "$(boot_run systemctl is-active containerd)" == active ]] || fail "containerd is not active"
out=$(run_through_shim c2) || fail "after the rollback, ctr run through demo failed: $out"
# Every attempt at the broken shim is one rolled-back transaction (the daemon may have retried
# once before it stopped): each a warning in the journal, each counted, and nothing committed.
journal_expect "the rollback of broken" SHIM=broken "rolled-back" -- HANDLER=broken PRIORITY=4 \
    "TXN=$(last_txn_id "$root")"
! journal_has SHIM=broken "committed" || fail "the journal has a committed record for the broken shim"
rollbacks=$(journal_txns SHIM=broken "rolled-back")
node_exporter_scrape >/dev/null
expect_metric shimkeeper_rollbacks_total "$rollbacks"
expect_metric 'shimkeeper_transactions_total{result="rolled-back"}' "$rollbacks"
expect_metric shimkeeper_shims_installed 1
rm "$root/etc/shimkeeper/shims.d/20-broken.toml"
boot_run systemctl start shimkeeper || fail "the daemon does not start again"

# --- 3b. upgrade: a newer version of the package (this one, its version raised) restarts the
# daemon (whose start recovers any unfinished transaction first: tests/node), and the node stays
# as it is: same config, the shim still runs containers.
dpkg-deb -R "$deb" "$T/upgrade"
sed -i -E 's/^(Version: .*)$/\1+upgrade1/' "$T/upgrade/DEBIAN/control"
dpkg-deb -b "$T/upgrade" "$root/root/shimkeeper-upgrade.deb" >/dev/null
pid_before=$(boot_run systemctl show -p MainPID --value shimkeeper)
boot_run apt-get install -y -q /root/shimkeeper-upgrade.deb >"$T/upgrade.log" 2>&1 ||
    fail "apt-get install of the newer package failed: $(tail -20 "$T/upgrade.log")"
rm "$root/root/shimkeeper-upgrade.deb"
[[ "$(boot_run dpkg-query -W -f '${Version}' shimkeeper)" == *+upgrade1 ]] || fail "not upgraded"
[[ "$(boot_run systemctl is-active shimkeeper)" == active ]] ||
    fail "after the upgrade the daemon is $(boot_run systemctl is-active shimkeeper)"
pid_after=$(boot_run systemctl show -p MainPID --value shimkeeper)
[[ $pid_after != "$pid_before" ]] || fail "the upgrade did not restart the daemon (MainPID $pid_after)"
[[ "$(tree_digest "$root/etc/containerd")" == "$config_with_demo" ]] ||
    fail "the upgrade changed containerd's config"
out=$(run_through_shim c2u) || fail "after the upgrade, ctr run through demo failed: $out"

# --- 4. remove: daemon gone, shim still works across a containerd restart; purge keeps it.
boot_run apt-get remove -y -q shimkeeper >"$T/remove.log" 2>&1 || fail "apt-get remove failed"
[[ ! -e $root/usr/bin/shimkeeper ]] || fail "/usr/bin/shimkeeper is still there after remove"
[[ "$(boot_run systemctl is-active shimkeeper)" != active ]] || fail "the daemon still runs"
boot_run systemctl restart containerd || fail "containerd does not restart after remove"
out=$(run_through_shim c3) || fail "after remove + containerd restart, the shim fails: $out"
boot_run apt-get purge -y -q shimkeeper >"$T/purge1.log" 2>&1 || fail "purge (not reset) failed"
grep -q "shimkeeper reset" "$T/purge1.log" || fail "purge did not say how to finish: $(cat "$T/purge1.log")"
[[ -d $root/var/lib/shimkeeper/store ]] || fail "purge of a node still using shims removed the store"
out=$(run_through_shim c4) || fail "after a purge of a node still using shims, the shim fails: $out"

# --- 5. the way back: reinstall, stop, reset, purge.
boot_run apt-get install -y -q "$deb_in_node" >"$T/install2.log" 2>&1 || fail "reinstall failed"
boot_run systemctl disable --now shimkeeper || fail "cannot stop the daemon"
boot_run sh -c ': >/run/containerd-starts'
boot_run shimkeeper reset >"$T/reset.out" 2>&1 || fail "shimkeeper reset failed: $(cat "$T/reset.out")"
(($(starts) == 1)) || fail "reset started containerd $(starts) times, expected once"
# The counters went with the store: node_exporter must not go on serving them.
[[ ! -e $root/var/lib/prometheus/node-exporter/shimkeeper.prom ]] ||
    fail "reset left node_exporter's shimkeeper.prom: $(grep -v '^#' "$root/var/lib/prometheus/node-exporter/shimkeeper.prom")"
boot_run apt-get purge -y -q shimkeeper >"$T/purge2.log" 2>&1 || fail "purge failed"
rm -f "$root$deb_in_node"
[[ "$(tree_digest "$root/etc/containerd")" == "$config_before" ]] ||
    fail "containerd's config is not byte for byte what it was before the install"
left=$(find "$root" -xdev -name '*shimkeeper*' -not -path "$root/proc/*" -not -path "$root/sys/*" \
    -not -path "$root/run/systemd/*" 2>/dev/null | sed "s#^$root##")
[[ -z $left ]] || fail "shimkeeper files are left after reset + purge: $left"
boot_poweroff
echo "ok: installed, converged over the system bus, rolled back, survived remove, reset + purge left nothing"
