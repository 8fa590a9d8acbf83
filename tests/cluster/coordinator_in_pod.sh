#!/usr/bin/env bash
# `shimkeeper coordinate` as it runs in a Pod: no -c file and no kubeconfig, only what the
# kubelet gives a container (KUBERNETES_SERVICE_HOST and _PORT, pointing at the real API server
# here, as no kube-proxy runs; a ServiceAccount folder laid out as the kubelet's atomic writer
# lays it out: ca.crt, namespace and a real token of shimkeeper-coordinator from
# `kubectl create token`), and --listen for its probes and /metrics:
#   - a bad --listen value, no credentials at all, and a ServiceAccount folder without a token are
#     each refused with an error naming what is wrong (exit 2), before anything is asked;
#   - two replicas: one leads, the other stands by; both answer /healthz and /readyz with 200, and
#     /metrics, parsed by Prometheus' own parser (python3-prometheus-client), says which leads;
#   - the leader writes the RuntimeClass of a Shim; a node asks for a rollout slot and is granted
#     one (shimkeeper_coordinator_grants_total counts it); the node reports installed
#     (shimkeeper_shim_nodes{shim,state} counts it);
#   - the ServiceAccount is deleted and created again (every token of the old one is refused from
#     then on: checked) and the kubelet's rotation is played (a new token swapped in under ..data):
#     without a restart, the same processes write the RuntimeClass of a new Shim and stay ready.
# seconds-about: 60
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
kube_require_peers
# Debian's python3 (the package python3-prometheus-client is for it), whichever python3 is first
# on PATH.
PROM_PYTHON=/usr/bin/python3
"$PROM_PYTHON" -c 'import prometheus_client.parser' 2>/dev/null ||
    skip "python3-prometheus-client is not installed (scripts/install-deps)"
[[ ! -e /etc/shimkeeper/shimkeeper.toml ]] ||
    skip "/etc/shimkeeper/shimkeeper.toml exists here: a Pod has none, and coordinate would read it"
sk_init
kube_up "$T/kube"
pass() { echo "ok: $*"; }

# --- refusals: each names what is wrong, exit 2
refused() { # WHAT EXPECTED-TEXT CMD...: CMD exits 2 and its stderr holds EXPECTED-TEXT
    local what=$1 expected=$2 rc=0
    shift 2
    "$@" >"$T/refused.out" 2>&1 || rc=$?
    ((rc == 2)) || fail "$what: exit $rc, not 2: $(cat "$T/refused.out")"
    grep -qF -- "$expected" "$T/refused.out" ||
        fail "$what: the error does not say \"$expected\": $(cat "$T/refused.out")"
}
refused "a port that is a name" '--listen "127.0.0.1:http": the port is not a number from 1 to 65535' \
    "$SHIMKEEPER" coordinate --listen 127.0.0.1:http
refused "no credentials at all" "no /etc/shimkeeper/shimkeeper.toml to name a [kube] kubeconfig" \
    env -u KUBERNETES_SERVICE_HOST -u KUBERNETES_SERVICE_PORT "$SHIMKEEPER" coordinate
grep -qF "KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set" "$T/refused.out" ||
    fail "the error without credentials does not name the in-cluster variables: $(cat "$T/refused.out")"
mkdir -p "$T/empty-sa"
refused "a ServiceAccount folder without a token" "cannot read $T/empty-sa/ca.crt" \
    env KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$KUBE_APISERVER_PORT" \
    SHIMKEEPER_SERVICE_ACCOUNT_DIR="$T/empty-sa" "$SHIMKEEPER" coordinate
cp "$KUBE_CA" "$T/empty-sa/ca.crt"
refused "a ServiceAccount folder without a token" "cannot read $T/empty-sa/token" \
    env KUBERNETES_SERVICE_HOST=127.0.0.1 KUBERNETES_SERVICE_PORT="$KUBE_APISERVER_PORT" \
    SHIMKEEPER_SERVICE_ACCOUNT_DIR="$T/empty-sa" "$SHIMKEEPER" coordinate
pass "bad --listen, no credentials and a folder without ca.crt or token: refused, each named"

# --- the mounted ServiceAccount, as the kubelet's atomic writer keeps it: the files are links
# through ..data, which is swapped in one rename when the token rotates.
SA=$T/serviceaccount
mount_token() { # TOKEN VERSION
    mkdir -p "$SA/..$2"
    cp "$KUBE_CA" "$SA/..$2/ca.crt"
    printf 'shimkeeper-system' >"$SA/..$2/namespace"
    printf '%s' "$1" >"$SA/..$2/token"
    ln -sfn "..$2" "$SA/..data_tmp"
    mv -T "$SA/..data_tmp" "$SA/..data"
    local name
    for name in ca.crt namespace token; do
        [[ -L $SA/$name ]] || ln -s "..data/$name" "$SA/$name"
    done
}
coordinator_token() {
    kube_admin -n shimkeeper-system create token shimkeeper-coordinator --duration 1h
}
mkdir -p "$SA"
old_token=$(coordinator_token)
mount_token "$old_token" 1

read -r port_a port_b <<<"$(kube_free_ports 2)"
declare -A PIDS=()
start_in_pod() { # NAME PORT
    env -u KUBECONFIG KUBERNETES_SERVICE_HOST=127.0.0.1 \
        KUBERNETES_SERVICE_PORT="$KUBE_APISERVER_PORT" SHIMKEEPER_SERVICE_ACCOUNT_DIR="$SA" \
        "$SHIMKEEPER" --log-level debug coordinate --identity "$1" --listen "127.0.0.1:$2" \
        >"$T/$1.log" 2>&1 &
    sk_track $!
    PIDS[$1]=$!
}
start_in_pod pod_a "$port_a"
kube_wait_for 60 curl -sf "http://127.0.0.1:$port_a/readyz" ||
    fail "pod_a never answered /readyz with 200: $(cat "$T/pod_a.log")"
start_in_pod pod_b "$port_b"

# metric PORT NAME [LABEL=VALUE...]: the sample's value as Prometheus' parser reads /metrics
# ("absent" when no sample has those labels); fails on a body the parser refuses.
metric() {
    local port=$1
    shift
    curl -sf "http://127.0.0.1:$port/metrics" | "$PROM_PYTHON" -c '
import sys
from prometheus_client.parser import text_string_to_metric_families
name, want = sys.argv[1], dict(a.split("=", 1) for a in sys.argv[2:])
for family in text_string_to_metric_families(sys.stdin.read()):
    for sample in family.samples:
        if sample.name == name and all(sample.labels.get(k) == v for k, v in want.items()):
            print(int(sample.value) if sample.value == int(sample.value) else sample.value)
            sys.exit(0)
print("absent")' "$@"
}
metric_is() { # EXPECTED (a number, or ">0") PORT NAME [LABEL=VALUE...]
    local value
    value=$(metric "${@:2}")
    [[ $value == "$1" ]] || [[ $1 == ">0" && $value =~ ^[1-9] ]]
}
wait_metric() { # SECONDS EXPECTED PORT NAME [LABEL=VALUE...]
    local seconds=$1 expected=$2
    shift 2
    kube_wait_for "$seconds" metric_is "$expected" "$@" ||
        fail "waited ${seconds}s for $* to be $expected; /metrics says $(metric "$@")"
}
leader_port() {
    if [[ $(metric "$port_a" shimkeeper_coordinator_leader) == 1 ]]; then echo "$port_a"; else echo "$port_b"; fi
}
kube_wait_for 60 curl -sf "http://127.0.0.1:$port_b/readyz" ||
    fail "pod_b never answered /readyz with 200: $(cat "$T/pod_b.log")"
both_leader_gauges() {
    echo "$(metric "$port_a" shimkeeper_coordinator_leader) $(metric "$port_b" shimkeeper_coordinator_leader)"
}
one_leader() {
    local gauges
    gauges=$(both_leader_gauges)
    [[ $gauges == "1 0" || $gauges == "0 1" ]]
}
kube_wait_for 60 one_leader ||
    fail "not one leader and one standby: leader gauges $(both_leader_gauges)"
for port in "$port_a" "$port_b"; do
    for path in healthz readyz; do
        code=$(curl -s -o "$T/body" -w '%{http_code}' "http://127.0.0.1:$port/$path")
        [[ $code == 200 ]] || fail "/$path on port $port answered $code: $(cat "$T/body")"
    done
    type=$(curl -s -o /dev/null -w '%{content_type}' "http://127.0.0.1:$port/metrics")
    [[ $type == "text/plain; version=0.0.4; charset=utf-8" ]] || fail "/metrics is served as \"$type\""
done
leader=$(leader_port)
pass "in-cluster configuration only: one replica leads, the other stands by; both live and ready"

# --- the leader's work, and what /metrics counts of it
kube_create_node node-a wasm=true
kube_shim_yaml demo "https://example.org/demo.tar.gz" "$(printf '%064d' 0)" \
    "  nodeSelector: {wasm: \"true\"}
  rolloutStrategy: {type: rolling, rolling: {maxUpdate: 1}}" | kube_admin apply -f - >/dev/null
kube_wait_for 60 kube_admin get runtimeclass demo ||
    fail "the coordinator wrote no RuntimeClass for Shim demo: $(tail -n 20 "$T"/pod_*.log)"
wait_metric 30 1 "$leader" shimkeeper_shim_nodes shim=demo state=selected
uid=$(kube_admin get shim demo -o jsonpath='{.metadata.uid}')
generation=$(kube_admin get shim demo -o jsonpath='{.metadata.generation}')
now=$(date -u +%Y-%m-%dT%H:%M:%S.000000Z)
kube_admin annotate --overwrite node node-a >/dev/null \
    "shim.containerd.x-k8s.io/slot_requests={\"demo\": {\"uid\": \"$uid\", \"generation\": $generation, \"since\": \"$now\"}}"
holder() {
    kube_admin -n shimkeeper-system get leases -o json | python3 -S -c '
import json, sys
print(" ".join(sorted(l["spec"].get("holderIdentity", "") for l in json.load(sys.stdin)["items"]
               if l["metadata"].get("annotations", {}).get("shim.containerd.x-k8s.io/shim") == "demo")))'
}
granted_to_node_a() { [[ $(holder) == node-a ]]; }
kube_wait_for 30 granted_to_node_a || fail "node-a was granted no slot of demo: $(holder)"
wait_metric 10 1 "$leader" shimkeeper_coordinator_grants_total
kube_admin label --overwrite node node-a shim.containerd.x-k8s.io/demo=demo >/dev/null
kube_admin annotate --overwrite node node-a >/dev/null \
    "shim.containerd.x-k8s.io/demo={\"state\": \"installed\", \"generation\": $generation}"
wait_metric 30 1 "$leader" shimkeeper_shim_nodes shim=demo state=installed
wait_metric 10 ">0" "$leader" shimkeeper_coordinator_passes_total
wait_metric 10 ">0" "$leader" shimkeeper_api_request_duration_seconds_count verb=POST
[[ $(metric "$leader" shimkeeper_shim_nodes shim=demo state=failed) == 0 ]] ||
    fail "node-a counted as failed: $(metric "$leader" shimkeeper_shim_nodes shim=demo state=failed)"
pass "RuntimeClass written; /metrics counts the grant to node-a and node-a installed of Shim demo"

# --- the token rotates and the old one stops working; no restart
kube_admin -n shimkeeper-system delete serviceaccount shimkeeper-coordinator >/dev/null
kube_admin -n shimkeeper-system create serviceaccount shimkeeper-coordinator >/dev/null
# The API server caches a token it accepted for a few seconds: wait until it refuses the old one,
# so that nothing the coordinators do from here on can pass with it.
old_token_refused() {
    [[ $(curl -s -o /dev/null -w '%{http_code}' --cacert "$KUBE_CA" \
        -H "Authorization: Bearer $old_token" "$KUBE_SERVER/api") == 401 ]]
}
kube_wait_for 60 old_token_refused ||
    fail "the old token is still accepted a minute after the ServiceAccount was replaced"
mount_token "$(coordinator_token)" 2
rm -rf "$SA/..1"
kube_shim_yaml second "https://example.org/second.tar.gz" "$(printf '%064d' 0)" |
    kube_admin apply -f - >/dev/null
kube_wait_for 60 kube_admin get runtimeclass second ||
    fail "no RuntimeClass for Shim second after the rotation: $(tail -n 30 "$T"/pod_*.log)"
for name in pod_a pod_b; do
    kill -0 "${PIDS[$name]}" || fail "$name exited: $(tail -n 20 "$T/$name.log")"
done
for port in "$port_a" "$port_b"; do
    curl -sf "http://127.0.0.1:$port/readyz" >/dev/null || fail "port $port is not ready after the rotation"
done
kube_wait_for 30 one_leader ||
    fail "not one leader after the rotation: leader gauges $(both_leader_gauges)"
pass "the old token refused, the rotated one read: the same processes write Shim second's RuntimeClass"
