#!/usr/bin/env bash
# The node agent rides out an API server that hangs and a credential that is refused. One real
# sandboxed node (systemd --user + containerd), its agent run by that systemd as a Type=notify unit
# with a short WatchdogSec, a cluster Shim installed on it:
#   - etcd stopped (SIGSTOP) under a living kube-apiserver, so requests hang rather than fail,
#     for twice WatchdogSec, while the agent installs a second cluster Shim it read just before
#     (its artifact trickles in), so it has its Node to tell (open watches stay open through such
#     an outage: an idle agent asks nothing): the agent lives (same MainPID, NRestarts 0, no
#     Result=watchdog), installs what it read, a drop-in added to shims.d/ meanwhile converges,
#     the first cluster shim stays, `status` and status.json say since when the API server has not
#     answered; etcd back (SIGCONT): the Node is told, nothing else changes, no restart;
#     The coordinator (`shimkeeper coordinate`) runs as a Type=notify unit with the same
#     WatchdogSec, and a Shim it has to write for (finalizer, RuntimeClass, status) is created
#     just before etcd stops: it lives too (NRestarts 0), its watchdog is never left half an
#     interval without a ping (its requests ping first, and its pass stops at the first
#     unanswered one), and once etcd is back it writes what it could not;
#   - the node's bound token replaced with an invalid one (atomically, as a renewal would) and the
#     API server restarted, so every watch and read is answered 401: a drop-in still converges,
#     the cluster's shim stays, `status`, status.json and the agent's log say `credentials
#     refused since …` and name the token file; the valid token put back: connected again;
#   - the token file removed and the API server restarted: the same, naming the file that cannot
#     be read.
#   - last, etcd stopped again while the agent holds rollout slots for two or three rolling Shims
#     (maxUpdate 1) whose downloads the artifact server holds: the downloads go on after the slots went stale,
#     and the agent neither dies (its slot take, release and renewal join the reconcile's pass:
#     pinged, and not asked after the first unanswered one) nor passes its point of no return;
#     etcd back: the coordinator grants again, the three install, their status says so;
# seconds-about: 260
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_shim.sh"
kube_require_peers
node_reexec_in_namespace "$@"
sk_init
kube_up "$T/kube"
node_shim_serve
for name in demo late local other gone roll1 roll2 roll3; do
    node_shim_artifact "$name" v1
done

watchdog=20 # seconds; the shipped unit says 3min, short here so the outage outlasts it twice
kube_create_node node-a
kubeconfig=$(kube_node_token_kubeconfig node-a 24h)
token_file=$KUBE_DIR/tokens/node-a
node_up "$T/a"
node_count_starts
cat >>"$NODE_AGENT_CONFIG" <<TOML

[kube]
kubeconfig = "$kubeconfig"
node_name = "node-a"
# roll1..3's downloads are held until released while the agent holds their slots: staged ahead,
# they would be held before the agent asked for any.
stage_ahead = false
TOML

agent_log=$NODE_DIR/log/agent.log
status_json=$NODE_DIR/run/status.json
unit=shimkeeper-agent.service
node_agent_unit "$unit" "$watchdog" 120 "$agent_log" --log-level debug run --status-file "$status_json"
prop() { systemctl --user show -p "$1" --value "${2:-$unit}"; }
systemctl --user start "$unit" || fail "the agent did not start: $(tail -n 30 "$agent_log")"

# The coordinator, as units/shimkeeper-coordinator.service runs it, under the same watchdog.
coordinator=shimkeeper-coordinator.service
coordinator_log=$T/coordinator.log
cat >"$T/coordinator.toml" <<TOML
[kube]
kubeconfig = "$(kube_kubeconfig coordinator)"
TOML
{
    printf '[Unit]\nDescription=shimkeeper coordinate for the test cluster\n\n[Service]\nType=notify\n'
    printf 'ExecStart=%s -c %s --log-level debug coordinate --identity coord-a\n' "$SHIMKEEPER" "$T/coordinator.toml"
    printf 'WatchdogSec=%ss\nRestart=on-failure\nRestartSec=1s\n' "$watchdog"
    printf 'StandardOutput=append:%s\nStandardError=append:%s\n' "$coordinator_log" "$coordinator_log"
} >"$XDG_CONFIG_HOME/systemd/user/$coordinator"
systemctl --user daemon-reload
systemctl --user start "$coordinator" || fail "the coordinator did not start: $(tail -n 30 "$coordinator_log")"

# The agent's unit as it is: restarts, main pid, result; the outages must not change it.
unit_line() { # [UNIT]
    echo "NRestarts=$(prop NRestarts "${1:-}") MainPID=$(prop MainPID "${1:-}") Result=$(prop Result "${1:-}") ActiveState=$(prop ActiveState "${1:-}")"
}
# The agent's process as systemd counts it: another MainPID or a restart is another process.
unit_identity() { echo "NRestarts=$(prop NRestarts) MainPID=$(prop MainPID) Result=$(prop Result)"; }
# unit_is IDENTITY: still that process, running (activating: its first reconcile before READY=1).
unit_is() {
    local state
    state=$(prop ActiveState)
    [[ "$(unit_identity)" == "$1" && ($state == active || $state == activating) ]]
}
coordinator_is() { [[ "$(unit_line "$coordinator")" == "$1" ]]; }
# The coordinator's last watchdog ping (systemd's record of it), sampled twice a second for the
# whole test: its loop turns every 200 ms, and each request pings before it starts.
pings=$T/coordinator-pings
(while :; do
    prop WatchdogTimestampMonotonic "$coordinator"
    sleep 0.5 # sampling at a fixed rate: the spans between pings are what is measured
done) >"$pings" 2>/dev/null &
sk_track $!
annotation_state() { # [SHIM]: what node-a's annotation says of it (default demo), "installed@1"
    kube_admin get node node-a -o json | python3 -S -c 'import json, sys
a = json.load(sys.stdin)["metadata"].get("annotations", {}).get("shim.containerd.x-k8s.io/" + sys.argv[1])
print("" if a is None else "%s@%s" % (json.loads(a)["state"], json.loads(a)["generation"]))' "${1:-demo}"
}
installed_and_labelled() {
    [[ "$(annotation_state)" == installed@1 &&
        -n "$(kube_admin get node node-a -o jsonpath='{.metadata.labels.shim\.containerd\.x-k8s\.io/demo}')" ]]
}
# drop_in NAME: shims.d/NAME.toml, renamed into place.
drop_in() {
    write_shim_toml "$NODE_SHIMS_D/.$1.tmp" "$1" "$1" "$SERVER_URL/$1-v1.tar.gz" "$(node_shim_digest "$1" v1)"
    mv "$NODE_SHIMS_D/.$1.tmp" "$NODE_SHIMS_D/$1.toml"
}
status_out() { ski status 2>&1 || true; }
status_says() { [[ "$(status_out)" == *"$1"* ]]; }
# status_cluster FIELD: that field of the cluster connection in the agent's status.json.
status_cluster() {
    python3 -S -c 'import json, sys
c = (json.load(open(sys.argv[1])).get("result") or {}).get("cluster") or {}
print(c.get(sys.argv[2], ""))' "$status_json" "$1" 2>/dev/null
}
status_cluster_has() { [[ -n "$(status_cluster "$1")" ]]; }
agent_reachable() { [[ "$(status_cluster reachable)" == True ]]; }
# converged_or_gone HANDLER: CRI lists HANDLER, or the agent died or restarted (checked next).
converged_or_gone() { ! unit_is "$alive" || node_cri_has_handler "$1"; }
# hold SECONDS: the agent and the coordinator stay up (same unit lines) for that long; fails at
# the first change.
hold() {
    local until=$((SECONDS + $1))
    while ((SECONDS < until)); do
        unit_is "$alive" || fail "the agent died or restarted: $(unit_line); its log: $(tail -n 30 "$agent_log")"
        coordinator_is "$coordinator_alive" ||
            fail "the coordinator died or restarted: $(unit_line "$coordinator"); its log: $(tail -n 30 "$coordinator_log")"
        sleep 1 # sampling the units once a second for the whole span, not waiting on a condition
    done
}
# coordinator_pinged_within SECONDS LINE: no span between two pings of its watchdog seen from
# that line of $pings on was longer.
coordinator_pinged_within() {
    coordinator_gap=$(tail -n +"$2" "$pings" | awk '$1 > 0 && $1 != last {
        if (last > 0 && $1 - last > gap) gap = $1 - last
        last = $1
    } END { print int(gap / 1000) }')
    ((coordinator_gap <= $1 * 1000)) ||
        fail "the coordinator's watchdog went $coordinator_gap ms without a ping (at most $1 s allowed): $(tail -n 30 "$coordinator_log")"
}

kube_shim_yaml demo "$SERVER_URL/demo-v1.tar.gz" "$(node_shim_digest demo v1)" | kube_admin apply -f - >/dev/null
kube_wait_for 90 installed_and_labelled ||
    fail "the cluster Shim demo did not install on node-a ($(annotation_state)): $(tail -n 30 "$agent_log")"
node_cri_has_handler demo || fail "node-a says demo is installed but CRI does not list it"
alive=$(unit_identity)
[[ "$(unit_line)" == "NRestarts=0 MainPID="*" Result=success ActiveState=active" ]] || fail "the agent's unit: $(unit_line)"
coordinator_leads() { grep -q "coordinator: coord-a leads" "$coordinator_log"; }
kube_wait_for 60 coordinator_leads || fail "the coordinator does not lead: $(tail -n 30 "$coordinator_log")"
coordinator_alive=$(unit_line "$coordinator")
[[ $coordinator_alive == "NRestarts=0 MainPID="*" Result=success ActiveState=active" ]] ||
    fail "the coordinator's unit: $coordinator_alive"
starts=$(node_starts)
echo "ok: Shim demo installed by the agent ($alive)"

echo "--- etcd stopped under the living API server for $((2 * watchdog)) s"
# Shim late's artifact trickles in (about 8 s), so etcd stops while the agent is installing it.
kube_shim_yaml late "$SERVER_URL/slow/524288/late-v1.tar.gz" "$(node_shim_digest late v1)" | kube_admin apply -f - >/dev/null
downloading() { grep -q "fetch late: downloading" "$agent_log"; }
kube_wait_for 60 downloading || fail "the agent did not start installing Shim late: $(tail -n 30 "$agent_log")"
# Shim burst selects no node: only the coordinator has work with it (finalizer, RuntimeClass,
# status), its pass armed by this change runs while etcd is stopped. The coordinator is held
# while burst is created and until the API server's watch cache has it: then its watch event
# needs no etcd, and none of the pass's requests can finish before etcd stops (either race
# would leave the pass unexercised).
coordinator_pid=$(prop MainPID "$coordinator")
kill -STOP "$coordinator_pid"
burst_rv=$(kube_shim_yaml burst "$SERVER_URL/demo-v1.tar.gz" "$(node_shim_digest demo v1)" \
    "  nodeSelector: {shimkeeper-test/none: here}" |
    kube_admin apply -f - -o jsonpath='{.metadata.resourceVersion}')
# A list at least as new as burst is served from the watch cache once the cache has it.
kube_admin get --raw "/apis/containerd.x-k8s.io/v1alpha1/shims?resourceVersion=$burst_rv&resourceVersionMatch=NotOlderThan" >/dev/null ||
    fail "the API server's watch cache did not reach Shim burst's resourceVersion $burst_rv"
kill -STOP "$KUBE_ETCD_PID"
kill -CONT "$coordinator_pid"
hung_at=$SECONDS
pinged_from=$(wc -l <"$pings")
# A request now hangs: the API server accepts it and waits for etcd.
! timeout 5 kubectl --kubeconfig "$KUBECONFIG_ADMIN" get node node-a >/dev/null 2>&1 ||
    fail "the API server still answers with etcd stopped: the outage is not a hang"
drop_in local
kube_wait_for 60 converged_or_gone local || true
unit_is "$alive" || fail "the agent died or restarted: $(unit_line); its log: $(tail -n 30 "$agent_log")"
node_cri_has_handler local ||
    fail "the drop-in local did not converge while the API server hangs: $(tail -n 30 "$agent_log")"
echo "ok: shims.d/local.toml converged while the API server hangs"
hold $((hung_at + 2 * watchdog - SECONDS))
echo "ok: the agent lived through $((SECONDS - hung_at)) s of a hanging API server ($(unit_line))"
grep -q "Shim burst: " "$coordinator_log" ||
    fail "the coordinator made no request for Shim burst while etcd was stopped (the test did not exercise its pass): $(tail -n 30 "$coordinator_log")"
coordinator_pinged_within $((watchdog / 2)) "$pinged_from"
echo "ok: the coordinator lived through it too, never $coordinator_gap ms without a watchdog ping ($(unit_line "$coordinator"))"
node_cri_has_handler demo || fail "the cluster shim demo left CRI while the API server hangs"
node_cri_has_handler late || fail "the agent did not install Shim late, read before the hang"
[[ "$(node_starts)" == $((starts + 2)) ]] ||
    fail "containerd started $(($(node_starts) - starts)) times, not twice (late, local)"
kube_wait_for 30 status_cluster_has unreachable_since ||
    fail "status.json does not say since when the API server has not answered: $(cat "$status_json")"
kube_wait_for 30 status_says "unreachable since" ||
    fail "status does not say since when the API server has not answered: $(status_out)"
echo "ok: status says: $(grep -m1 'unreachable since' <<<"$(status_out)")"
kill -CONT "$KUBE_ETCD_PID"
kube_wait_for 120 kube_ready || fail "the API server did not recover with etcd back"
late_installed() { [[ "$(annotation_state late)" == installed@1 ]]; }
kube_wait_for 180 late_installed || fail "etcd back, node-a still says $(annotation_state late) about late"
kube_wait_for 60 agent_reachable ||
    fail "the agent still says the API server is not answering: $(cat "$status_json")"
kube_wait_for 60 status_says "connected" || fail "status does not say connected with etcd back: $(status_out)"
installed_and_labelled || fail "after the hang node-a says $(annotation_state) about demo"
[[ "$(node_starts)" == $((starts + 2)) ]] || fail "containerd restarted after etcd came back"
unit_is "$alive" || fail "the agent restarted: $(unit_line)"
echo "ok: etcd back: the Node told, nothing else changed, no restart ($(unit_line))"
burst_done() {
    [[ -n "$(kube_admin get runtimeclass burst -o name 2>/dev/null)" &&
        "$(kube_admin get shim burst -o jsonpath='{.status.observedGeneration}')" == 1 ]]
}
kube_wait_for 60 burst_done ||
    fail "etcd back, the coordinator did not write the RuntimeClass and status of Shim burst: $(tail -n 30 "$coordinator_log")"
coordinator_is "$coordinator_alive" || fail "the coordinator restarted: $(unit_line "$coordinator")"
echo "ok: etcd back: the coordinator wrote Shim burst's RuntimeClass and status, no restart"


echo "--- the node's token refused"
starts=$(node_starts)
cp "$token_file" "$T/good-token"
replace_token() { # FILE: the token file replaced atomically, as the README's renewal does
    cp "$1" "$KUBE_DIR/tokens/.node-a.new"
    mv -f "$KUBE_DIR/tokens/.node-a.new" "$token_file"
}
printf 'not-a-token' >"$T/bad-token"
replace_token "$T/bad-token"
# Open watches were authenticated when they began: a restarted API server makes every request
# of the agent, its watches included, present the bad token.
kube_stop_pid "$KUBE_APISERVER_PID"
kube_start_apiserver "$KUBE_APISERVER_PORT" "$KUBE_ETCD_PORT"
kube_wait_for 120 kube_ready || fail "the API server did not come back"
drop_in other
kube_wait_for 60 converged_or_gone other || true
unit_is "$alive" || fail "the agent died or restarted: $(unit_line); its log: $(tail -n 30 "$agent_log")"
node_cri_has_handler other ||
    fail "the drop-in other did not converge with the token refused: $(tail -n 30 "$agent_log")"
echo "ok: shims.d/other.toml converged with the token refused"
node_cri_has_handler demo || fail "the cluster shim demo left CRI with the token refused"
installed_and_labelled || fail "with the token refused node-a says $(annotation_state) about demo"
kube_wait_for 30 status_says "credentials refused since" ||
    fail "status does not say credentials refused: $(status_out)"
kube_wait_for 30 status_says "$token_file" || fail "status does not name the token file $token_file: $(status_out)"
kube_wait_for 30 status_cluster_has credentials_refused_since ||
    fail "status.json does not say credentials refused: $(cat "$status_json")"
[[ "$(status_cluster renew)" == "$token_file" ]] ||
    fail "status.json does not name the token file $token_file to renew: $(cat "$status_json")"
grep -q "credentials refused since.*$token_file" "$agent_log" ||
    fail "the agent's log does not say credentials refused naming $token_file: $(tail -n 20 "$agent_log")"
echo "ok: status says: $(grep -m1 'credentials refused since' <<<"$(status_out)" || status_out)"
replace_token "$T/good-token"
kube_wait_for 60 status_says "connected" || fail "status does not say connected with the token back: $(status_out)"
# Its watches, refused for minutes, retry after a backoff of up to 30 s each (watch_state.hpp),
# and a watch that comes back to a 410 lists anew first: two of those in a row on a loaded
# machine took longer than a minute once.
kube_wait_for 120 agent_reachable ||
    fail "the agent did not recover with the token back: $(cat "$status_json")"
installed_and_labelled || fail "after the token came back node-a says $(annotation_state) about demo"
[[ "$(node_starts)" == $((starts + 1)) ]] ||
    fail "containerd started $(($(node_starts) - starts)) times, not once (for other)"
unit_is "$alive" || fail "the agent restarted: $(unit_line)"
echo "ok: the token back: connected, nothing changed, no restart ($(unit_line))"

echo "--- the node's token file removed"
starts=$(node_starts)
rm -f "$token_file"
# As above: open watches were authenticated when they began; restarted, they need the token.
kube_stop_pid "$KUBE_APISERVER_PID"
kube_start_apiserver "$KUBE_APISERVER_PORT" "$KUBE_ETCD_PORT"
kube_wait_for 120 kube_ready || fail "the API server did not come back"
drop_in gone
kube_wait_for 60 converged_or_gone gone || true
unit_is "$alive" || fail "the agent died or restarted: $(unit_line); its log: $(tail -n 30 "$agent_log")"
node_cri_has_handler gone ||
    fail "the drop-in gone did not converge with the token file removed: $(tail -n 30 "$agent_log")"
echo "ok: shims.d/gone.toml converged with the token file removed"
installed_and_labelled || fail "with the token file removed node-a says $(annotation_state) about demo"
node_cri_has_handler demo || fail "the cluster shim demo left CRI with the token file removed"
kube_wait_for 30 status_says "credentials refused since" ||
    fail "status does not say the credential cannot be read: $(status_out)"
status_says "cannot read the kubeconfig's tokenFile $token_file" ||
    fail "status does not say the token file $token_file cannot be read: $(status_out)"
kube_wait_for 30 status_cluster_has credentials_refused_since ||
    fail "status.json does not say credentials refused: $(cat "$status_json")"
[[ "$(status_cluster renew)" == "$token_file" ]] ||
    fail "status.json does not name the token file $token_file to renew: $(cat "$status_json")"
grep -q "credentials refused since.*tokenFile $token_file.*renew $token_file" "$agent_log" ||
    fail "the agent's log does not say the token file $token_file cannot be read: $(tail -n 20 "$agent_log")"
echo "ok: status says: $(grep -m1 'credentials refused since' <<<"$(status_out)" || status_out)"
replace_token "$T/good-token"
kube_wait_for 60 status_says "connected" || fail "status does not say connected with the token file back: $(status_out)"
kube_wait_for 60 agent_reachable ||
    fail "the agent did not recover with the token file back: $(cat "$status_json")"
[[ "$(node_starts)" == $((starts + 1)) ]] ||
    fail "containerd started $(($(node_starts) - starts)) times, not once (for gone)"
unit_is "$alive" || fail "the agent restarted: $(unit_line)"
echo "ok: the token file back: connected, no restart ($(unit_line))"
echo "--- etcd stopped while the agent holds rollout slots"
starts=$(node_starts)
rolling="  rolloutStrategy: {type: rolling, rolling: {maxUpdate: 1}}"
systemctl --user stop "$coordinator"
for n in 1 2 3; do
    echo ---
    kube_shim_yaml "roll$n" "$SERVER_URL/hold/1/roll$n-v1.tar.gz" "$(node_shim_digest "roll$n" v1)" "$rolling"
done | kube_admin apply -f - >/dev/null
# All three slots in one transaction: the coordinator grants them while the agent is stopped, so
# the agent's slot watch starts with the three (granted one by one to a running agent, the first
# grant may start a transaction before the others arrive).
requests_of_node_a() {
    kube_admin get node node-a -o jsonpath='{.metadata.annotations.shim\.containerd\.x-k8s\.io/slot_requests}'
}
asked_for_three() { [[ "$(requests_of_node_a)" == *roll1*roll2*roll3* ]]; }
kube_wait_for 60 asked_for_three || fail "node-a did not ask for slots of roll1..3: $(requests_of_node_a)"
systemctl --user stop "$unit"
systemctl --user start "$coordinator"
granted_three() {
    (($(kube_admin get leases -n shimkeeper-system \
        -o jsonpath='{range .items[*]}{.metadata.name}={.spec.holderIdentity}{"\n"}{end}' |
        grep -c '^roll[123]-slot-0=node-a$') == 3))
}
kube_wait_for 60 granted_three || fail "the coordinator did not grant roll1..3 to node-a: $(tail -n 20 "$coordinator_log")"
# Not waiting for READY=1: it follows the first reconcile, and when the slot watch has synced by
# then, that reconcile is the transaction whose downloads this test holds.
systemctl --user start --no-block "$unit"
roll_downloading() { grep -q "fetch roll[123]: downloading" "$agent_log"; }
kube_wait_for 60 roll_downloading || fail "the agent did not start installing roll1..3: $(tail -n 30 "$agent_log")"
alive=$(unit_identity)
[[ $alive == "NRestarts=0 MainPID="[1-9]* ]] || fail "the agent's unit: $(unit_line)"
coordinator_alive=$(unit_line "$coordinator")
taken=$(grep -c "rollout: took slot .* for Shim/roll" "$agent_log")
((taken == 3)) || fail "the agent holds $taken rollout slot(s) for its transaction, not 3: $(grep "rollout:" "$agent_log" | tail -n 20)"
kill -STOP "$KUBE_ETCD_PID"
hung_at=$SECONDS
pinged_from=$(wc -l <"$pings")
# The slots go stale (no renewal answered for two thirds of the lease), then the downloads end.
hold 12
curl -fsS "$SERVER_URL/_release" >/dev/null || fail "the artifact server did not release the held downloads"
hold $((hung_at + 2 * watchdog - SECONDS))
echo "ok: the agent lived through $((SECONDS - hung_at)) s of a hanging API server holding slots ($(unit_line))"
for n in 1 2 3; do
    ! node_cri_has_handler "roll$n" ||
        fail "the agent installed roll$n on a slot it could not confirm: $(grep "rollout:" "$agent_log" | tail -n 20)"
done
grep -q "rollout: not changing Shim/roll" "$agent_log" ||
    fail "the agent does not say it stopped before its point of no return: $(grep "rollout:" "$agent_log" | tail -n 20)"
coordinator_pinged_within $((watchdog / 2)) "$pinged_from"
echo "ok: nothing installed on a stale slot; the coordinator lived through it ($(unit_line "$coordinator"))"
kill -CONT "$KUBE_ETCD_PID"
kube_wait_for 120 kube_ready || fail "the API server did not recover with etcd back"
rolls_installed() {
    local n
    for n in 1 2 3; do
        [[ "$(annotation_state "roll$n")" == installed@1 &&
            "$(kube_admin get shim "roll$n" -o jsonpath='{.status.nodes.installed}')" == 1 ]] || return 1
    done
}
kube_wait_for 180 rolls_installed ||
    fail "etcd back, roll1..3 did not install ($(annotation_state roll1) $(annotation_state roll2) $(annotation_state roll3)): $(grep "rollout:" "$agent_log" | tail -n 20)"
for n in 1 2 3; do
    node_cri_has_handler "roll$n" || fail "node-a says roll$n is installed but CRI does not list it"
done
unit_is "$alive" && [[ "$(prop ActiveState)" == active ]] ||
    fail "the agent restarted or is not active: $(unit_line), was $alive"
coordinator_is "$coordinator_alive" || fail "the coordinator restarted: $(unit_line "$coordinator")"
echo "ok: etcd back: roll1..3 installed through new slots, their status says so, no restart"

systemctl --user stop "$unit" "$coordinator"
