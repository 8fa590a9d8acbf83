#!/usr/bin/env bash
# Issue 22, items 1 and 2: the node agent rides out an API server that hangs and a credential
# that is refused. One real sandboxed node (systemd --user + containerd), its agent run by that
# systemd as a Type=notify unit with a short WatchdogSec, a cluster Shim installed on it:
#   - etcd stopped (SIGSTOP) under a living kube-apiserver, so requests hang rather than fail,
#     for twice WatchdogSec, while the agent installs a second cluster Shim it read just before
#     (its artifact trickles in), so it has its Node to tell (open watches stay open through such
#     an outage: an idle agent asks nothing): the agent lives (same MainPID, NRestarts 0, no
#     Result=watchdog), installs what it read, a drop-in added to shims.d/ meanwhile converges,
#     the first cluster shim stays, `status` and status.json say since when the API server has not
#     answered; etcd back (SIGCONT): the Node is told, nothing else changes, no restart;
#   - the node's bound token replaced with an invalid one (atomically, as a renewal would) and the
#     API server restarted, so every watch and read is answered 401: a drop-in still converges,
#     the cluster's shim stays, `status`, status.json and the agent's log say `credentials
#     refused since …` and name the token file; the valid token put back: connected again.
# seconds-about: 150
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_shim.sh"
kube_require_peers
node_reexec_in_namespace "$@"
sk_init
kube_up "$T/kube"
node_shim_serve
for name in demo late local other; do
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
TOML

agent_log=$NODE_DIR/log/agent.log
status_json=$NODE_DIR/run/status.json
unit=shimkeeper-agent.service
node_agent_unit "$unit" "$watchdog" 120 "$agent_log" --log-level debug run --status-file "$status_json"
prop() { systemctl --user show -p "$1" --value "$unit"; }
systemctl --user start "$unit" || fail "the agent did not start: $(tail -n 30 "$agent_log")"

# The agent's unit as it is: restarts, main pid, result; the outages must not change it.
unit_line() { echo "NRestarts=$(prop NRestarts) MainPID=$(prop MainPID) Result=$(prop Result) ActiveState=$(prop ActiveState)"; }
unit_is() { [[ "$(unit_line)" == "$1" ]]; }
annotation_state() { # [SHIM]: what node-a's annotation says of it (default demo), "installed@1"
    kube_admin get node node-a -o json | python3 -c 'import json, sys
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
    python3 -c 'import json, sys
c = (json.load(open(sys.argv[1])).get("result") or {}).get("cluster") or {}
print(c.get(sys.argv[2], ""))' "$status_json" "$1" 2>/dev/null
}
status_cluster_has() { [[ -n "$(status_cluster "$1")" ]]; }
agent_reachable() { [[ "$(status_cluster reachable)" == True ]]; }
# converged_or_gone HANDLER: CRI lists HANDLER, or the agent died or restarted (checked next).
converged_or_gone() { ! unit_is "$alive" || node_cri_has_handler "$1"; }
# hold SECONDS: the agent stays up (same unit line) for that long; fails at the first change.
hold() {
    local until=$((SECONDS + $1))
    while ((SECONDS < until)); do
        unit_is "$alive" || fail "the agent died or restarted: $(unit_line); its log: $(tail -n 30 "$agent_log")"
        sleep 1 # sampling the unit once a second for the whole span, not waiting on a condition
    done
}

kube_shim_yaml demo "$SERVER_URL/demo-v1.tar.gz" "$(node_shim_digest demo v1)" | kube_admin apply -f - >/dev/null
kube_wait_for 90 installed_and_labelled ||
    fail "the cluster Shim demo did not install on node-a ($(annotation_state)): $(tail -n 30 "$agent_log")"
node_cri_has_handler demo || fail "node-a says demo is installed but CRI does not list it"
alive=$(unit_line)
[[ $alive == "NRestarts=0 MainPID="*" Result=success ActiveState=active" ]] || fail "the agent's unit: $alive"
starts=$(node_starts)
echo "ok: Shim demo installed by the agent ($alive)"

echo "--- etcd stopped under the living API server for $((2 * watchdog)) s"
# Shim late's artifact trickles in (about 8 s), so etcd stops while the agent is installing it.
kube_shim_yaml late "$SERVER_URL/slow/524288/late-v1.tar.gz" "$(node_shim_digest late v1)" | kube_admin apply -f - >/dev/null
downloading() { grep -q "fetch late: downloading" "$agent_log"; }
kube_wait_for 60 downloading || fail "the agent did not start installing Shim late: $(tail -n 30 "$agent_log")"
kill -STOP "$KUBE_ETCD_PID"
hung_at=$SECONDS
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
echo "ok: status says: $(grep -m1 'credentials refused since' <<<"$(status_out)")"
replace_token "$T/good-token"
kube_wait_for 60 status_says "connected" || fail "status does not say connected with the token back: $(status_out)"
kube_wait_for 60 agent_reachable ||
    fail "the agent did not recover with the token back: $(cat "$status_json")"
installed_and_labelled || fail "after the token came back node-a says $(annotation_state) about demo"
[[ "$(node_starts)" == $((starts + 1)) ]] ||
    fail "containerd started $(($(node_starts) - starts)) times, not once (for other)"
unit_is "$alive" || fail "the agent restarted: $(unit_line)"
echo "ok: the token back: connected, nothing changed, no restart ($(unit_line))"
systemctl --user stop "$unit"
