# shellcheck shell=bash
# A real Kubernetes control plane on 127.0.0.1 for tests/cluster/*.sh: etcd and kube-apiserver
# built from the Go modules pinned in tests/peers/kube (scripts/build-kube-peers), the real
# kubectl, and deploy/ applied as the admin, all but the coordinator's Deployment. No controller
# manager and no scheduler run (tests/support/kube_node.sh adds them), so nothing is
# garbage-collected, no Node turns NotReady and no Pod is scheduled unless a test does it.
# Source this file, then:
#
#   kube_require_peers            # exit 77 when the peers are not built or openssl is missing
#   kube_up "$dir"                # CA, certs, tokens, etcd, kube-apiserver, deploy/; registers
#                                 # kube_down on EXIT (the folder is kept when the script fails)
#
# Helpers: kube_admin ARGS... (kubectl as the admin), kube_as IDENTITY ARGS... (kubectl as
# "admin", "coordinator", a node name, or NAME-bound / NAME-cert after the helpers below made
# them), kube_get PATH (the admin's GET through curl, for what is polled), kube_curl IDENTITY
# METHOD PATH [CURL-ARGS...] (one raw request), kube_create_node NAME
# [KEY=VALUE...], kube_wait_for SECONDS CMD..., kube_log MSG, kube_node_cert_kubeconfig NAME (a
# kubelet-style client-certificate kubeconfig; prints its path), kube_node_token_kubeconfig NAME
# [DURATION] (a token of ServiceAccount shimkeeper-node bound to Node NAME; prints the path of
# kubeconfig NAME-bound), kube_token_kubeconfig IDENTITY TOKEN (any requested token as identity
# IDENTITY), kube_shim_yaml NAME URL SHA256 [SPEC-LINES] (a Shim manifest on stdout),
# kube_proxy_start (a TCP proxy in front of the API server, tests/support/pausable_proxy.py, pid
# in KUBE_PROXY: kill -USR1 pauses it, -USR2 resumes it, -HUP severs the connections open then;
# kube_proxy_is STATE: whether it says STATE) and kube_proxied_kubeconfig FILE OUT (FILE with
# the proxy as its server).
#
# Identities (static tokens, --token-auth-file):
#   admin             user "shimkeeper-test-admin", group system:masters
#   coordinator       system:serviceaccount:shimkeeper-system:shimkeeper-coordinator, groups
#                     system:serviceaccounts, system:serviceaccounts:shimkeeper-system (the
#                     name and groups a real token of that ServiceAccount carries)
#   node-a ... node-c system:node:<name>, group system:nodes (what a kubelet presents)
# A node agent's ServiceAccount identity cannot be a static token: what confines it is the
# node-name extra that only a token bound to a Node carries (kube_node_token_kubeconfig). Such
# a kubeconfig names the token with tokenFile, as a deployed agent's does, so that it can be
# renewed in place.
#
# KUBE_CLIENT_CA, set before kube_start_apiserver, is the only CA the API server trusts for client
# certificates (default the test CA, KUBE_CA).
# KUBE_APISERVER_EXTRA_ARGS (space-separated) adds kube-apiserver flags, e.g. to serve a resource
# without the watch cache so that an etcd compaction is seen as 410 Gone.
# KUBE_APISERVER_EXTRA_SANS (e.g. IP:10.200.1.1), set before kube_up, adds subjectAltName entries
# to the API server's certificate: another address a client (a Pod) reaches it by.
# KUBE_CHART_SET (space-separated KEY=VALUE), set before kube_up, applies the chart rendered by
# helm with those values (scripts/build-helm) in place of deploy/, its default rendering: e.g.
# nodeServiceAccount=false for a cluster whose agents all use their kubelet's credential.
#
# Exports after kube_up: KUBE_DIR, KUBE_BIN (folder of the three programs; set it beforehand to
# test other builds), KUBE_SERVER (https URL), KUBE_CA (the CA certificate), KUBECONFIG_ADMIN,
# KUBECONFIG_COORDINATOR. `kube_kubeconfig IDENTITY` prints any identity's kubeconfig file, for
# a program under test (an agent reads its own, the coordinator its own).

KUBE_NODE_NAMES=(node-a node-b node-c)
KUBE_COORDINATOR_USER=system:serviceaccount:shimkeeper-system:shimkeeper-coordinator

kube_log() { printf '[kube] %s\n' "$*" >&2; }

kube_skip() {
    printf 'SKIP: %s\n' "$*" >&2
    exit 77
}

# kube_wait_for SECONDS CMD...: polls CMD until it succeeds or the deadline passes: every 0.2 s
# for the first 2 s, then every 0.5 s. A poll costs a tenth of a CPU second or more (a kubectl,
# a python3), several scenarios poll at once, and most conditions take seconds to come.
kube_wait_for() {
    local seconds=$1
    shift
    local start=$SECONDS
    while ! "$@" >/dev/null 2>&1; do
        if ((SECONDS - start >= seconds)); then
            return 1
        fi
        if ((SECONDS - start < 2)); then sleep 0.2; else sleep 0.5; fi
    done
}

kube_require_peers() {
    local source_dir=${SHIMKEEPER_SOURCE_DIR:?}
    command -v openssl >/dev/null || kube_skip "openssl is not installed"
    command -v python3 >/dev/null || kube_skip "python3 is not installed (picks free ports)"
    command -v curl >/dev/null || kube_skip "curl is not installed"
    if [[ -z ${KUBE_BIN:-} ]]; then
        KUBE_BIN=$("$source_dir/scripts/build-kube-peers" --cached-only 2>/dev/null) ||
            kube_skip "the Kubernetes peers are not built; run scripts/build-kube-peers"
    fi
    export KUBE_BIN
}

# kube_free_ports N: N distinct TCP ports that were free a moment ago on 127.0.0.1.
kube_free_ports() {
    python3 -S - "$1" <<'EOF'
import socket, sys
held = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    held.append(s)
print(" ".join(str(s.getsockname()[1]) for s in held))
EOF
}

# kube_kubeconfig IDENTITY: the kubeconfig file of "admin", "coordinator", a node name, or
# NAME-bound / NAME-cert.
kube_kubeconfig() {
    echo "$KUBE_DIR/kubeconfig/$1"
}

kube_admin() {
    "$KUBE_BIN/kubectl" --kubeconfig "$KUBECONFIG_ADMIN" "$@"
}

kube_as() {
    local identity=$1
    shift
    "$KUBE_BIN/kubectl" --kubeconfig "$(kube_kubeconfig "$identity")" "$@"
}

# kube_get PATH: the admin's GET of PATH, the body on stdout; fails on an HTTP error. For what
# the scenarios poll: kubectl costs about 0.08 CPU seconds a call before it sends anything (a
# whole run made 4,000 calls), a curl a tenth of that.
kube_get() {
    curl -sSf --max-time 10 --cacert "$KUBE_CA" \
        -H "Authorization: Bearer $(kube__kubeconfig_field "$KUBECONFIG_ADMIN" token)" "$KUBE_SERVER$1"
}

# kube_curl IDENTITY METHOD PATH [CURL-ARGS...]: one raw request as IDENTITY; prints the response
# body, then a line with the HTTP status. For requests kubectl would precede with a GET (label,
# patch), which the Node authorizer may refuse before admission is ever asked. The identity's
# kubeconfig holds its token inline or names it with tokenFile (read at every call, as a
# renewed token would be).
kube_curl() {
    local identity=$1 method=$2 path=$3 auth
    shift 3
    auth=$(kube_credential_args "$(kube_kubeconfig "$identity")") || return 1
    mapfile -t auth <<<"$auth"
    curl -sS --cacert "$KUBE_CA" "${auth[@]}" -X "$method" -w '\n%{http_code}\n' "$@" "$KUBE_SERVER$path"
}

# kube_credential_args KUBECONFIG: curl's arguments for that kubeconfig's user, one a line: its
# token, its token file's token, or its client certificate and key. Fails, saying so, when the
# kubeconfig names none of them. Read with sed, not kubectl (three calls a request, see
# kube_get): the harness writes every kubeconfig, each user field as "KEY: VALUE" on a line of
# its own or in a flow map.
kube_credential_args() {
    local kubeconfig=$1 token token_file cert
    token=$(kube__kubeconfig_field "$kubeconfig" token)
    token_file=$(kube__kubeconfig_field "$kubeconfig" tokenFile)
    cert=$(kube__kubeconfig_field "$kubeconfig" client-certificate)
    if [[ -n $token ]]; then
        printf '%s\n' -H "Authorization: Bearer $token"
    elif [[ -n $token_file ]]; then
        printf '%s\n' -H "Authorization: Bearer $(<"$token_file")"
    elif [[ -n $cert ]]; then
        printf '%s\n' --cert "$cert" --key "$(kube__kubeconfig_field "$kubeconfig" client-key)"
    else
        kube_log "the kubeconfig $kubeconfig names no token, token file nor client certificate"
        return 1
    fi
}

# kube__kubeconfig_field KUBECONFIG KEY: the first value of KEY, in block or flow style.
kube__kubeconfig_field() {
    sed -n -E "s/^(.*[{ ,])?$2: *([^,}[:space:]]+).*\$/\\2/p" "$1" | head -n 1
}

# kube_create_node NAME [KEY=VALUE...]: a Node object with those labels, as the admin (a kubelet
# would register itself; none runs here). Its status reports this machine's architecture and OS,
# as a kubelet's would, for tests that pick per-architecture artifacts.
kube_create_node() {
    local name=$1
    shift
    local labels="kubernetes.io/hostname: \"$name\"" pair
    for pair in "$@"; do
        labels+=", \"${pair%%=*}\": \"${pair#*=}\""
    done
    kube_admin create -f - >/dev/null <<EOF
apiVersion: v1
kind: Node
metadata:
  name: $name
  labels: {$labels}
status:
  nodeInfo: {architecture: $(kube_node_arch), operatingSystem: linux}
EOF
}

# The architecture as a kubelet reports it (Go's GOARCH names: amd64, arm64).
kube_node_arch() {
    case $(uname -m) in
    x86_64) echo amd64 ;;
    aarch64) echo arm64 ;;
    *) uname -m ;;
    esac
}

# EC P-256 keys throughout: a fraction of the CPU of RSA-2048 (what a kubelet's own client key
# is, too), paid again by every scenario.
kube_write_pki() {
    local pki=$KUBE_DIR/pki
    mkdir -p "$pki"
    (
        cd "$pki" || exit 1
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
            -subj "/CN=shimkeeper-test-ca" -keyout ca.key -out ca.crt 2>/dev/null
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=kube-apiserver" \
            -keyout apiserver.key -out apiserver.csr 2>/dev/null
        # Clients connect to 127.0.0.1; kubernetes.default names the in-cluster service.
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default%s\n' \
            "${KUBE_APISERVER_EXTRA_SANS:+,$KUBE_APISERVER_EXTRA_SANS}" >san.ext
        openssl x509 -req -in apiserver.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 \
            -extfile san.ext -out apiserver.crt 2>/dev/null
        # The key pair that signs and verifies ServiceAccount tokens (the apiserver insists on
        # one even though the tests authenticate with static tokens).
        openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out sa.key 2>/dev/null
        openssl pkey -in sa.key -pubout -out sa.pub 2>/dev/null
    )
    export KUBE_CA=$pki/ca.crt
}

# One random token per identity; the token file's columns: token,user,uid,"group,group".
kube_write_tokens() {
    local name
    : >"$KUBE_DIR/tokens.csv"
    kube_add_identity admin shimkeeper-test-admin system:masters
    kube_add_identity coordinator "$KUBE_COORDINATOR_USER" \
        "system:serviceaccounts,system:serviceaccounts:shimkeeper-system"
    for name in "${KUBE_NODE_NAMES[@]}"; do
        kube_add_identity "$name" "system:node:$name" system:nodes
    done
    chmod 0600 "$KUBE_DIR/tokens.csv"
}

# kube_shim_yaml NAME URL SHA256 [SPEC-LINES]: a Shim manifest (handler NAME, runtimeType
# io.containerd.NAME.v2) fetched over anonymous HTTP; SPEC-LINES are more spec fields, indented
# by two spaces.
kube_shim_yaml() {
    cat <<YAML
apiVersion: containerd.x-k8s.io/v1alpha1
kind: Shim
metadata: {name: $1}
spec:
  runtimeType: io.containerd.$1.v2
  fetchStrategy:
    type: anonymousHttp
    anonHttp: {location: "$2", sha256: "$3"}
${4:-}
YAML
}

# A kubeconfig for Node NAME that authenticates with a client certificate (O=system:nodes,
# CN=system:node:NAME, signed by the test CA, which the apiserver trusts for clients), key and
# certificate in one file as a kubelet's rotated credential keeps them.
kube_node_cert_kubeconfig() {
    local name=$1 dir=$KUBE_DIR/pki/node-$1
    mkdir -p "$dir" "$KUBE_DIR/kubeconfig"
    openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
        -subj "/O=system:nodes/CN=system:node:$name" -keyout "$dir/key.pem" -out "$dir/csr.pem" 2>/dev/null
    openssl x509 -req -in "$dir/csr.pem" -CA "$KUBE_CA" -CAkey "$KUBE_DIR/pki/ca.key" \
        -CAcreateserial -days 2 -out "$dir/cert.pem" 2>/dev/null
    cat "$dir/key.pem" "$dir/cert.pem" >"$dir/kubelet-client-current.pem"
    kube__write_kubeconfig "$name-cert" kubelet "{client-certificate: \
$dir/kubelet-client-current.pem, client-key: $dir/kubelet-client-current.pem}"
    kube_kubeconfig "$name-cert"
}

# kube__write_kubeconfig IDENTITY USER-NAME USER-FLOW-MAP: the kubeconfig file of IDENTITY, for
# the test bed's server and CA, with that user entry.
kube__write_kubeconfig() {
    mkdir -p "$KUBE_DIR/kubeconfig"
    cat >"$(kube_kubeconfig "$1")" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: test
    cluster: {server: $KUBE_SERVER, certificate-authority: $KUBE_CA}
users:
  - name: $2
    user: $3
contexts:
  - name: $2
    context: {cluster: test, user: $2}
current-context: $2
EOF
}

# kube_token_kubeconfig IDENTITY TOKEN [FILE]: writes TOKEN to $KUBE_DIR/tokens/FILE (default
# IDENTITY; 0600, through a temporary file and a rename, as a token is renewed under a running
# agent) and a kubeconfig for IDENTITY that names it with tokenFile; prints the kubeconfig's path.
kube_token_kubeconfig() {
    local identity=$1 token=$2 file=${3:-$1} tokens=$KUBE_DIR/tokens staged
    mkdir -p "$tokens" "$KUBE_DIR/kubeconfig"
    chmod 0700 "$tokens"
    staged=$(mktemp "$tokens/.$file.XXXXXX") # mktemp creates it 0600
    printf '%s' "$token" >"$staged"
    mv -f "$staged" "$tokens/$file"
    kube__write_kubeconfig "$identity" "$identity" "{tokenFile: $tokens/$file}"
    kube_kubeconfig "$identity"
}

# kube_node_token_kubeconfig NAME [DURATION]: a token of ServiceAccount
# shimkeeper-system/shimkeeper-node bound to Node NAME (which must exist), requested by the admin
# for DURATION (default 1h), kept in $KUBE_DIR/tokens/NAME; prints the path of kubeconfig
# NAME-bound, so `kube_as NAME-bound ...` acts as that node's agent.
kube_node_token_kubeconfig() {
    local name=$1 duration=${2:-1h} token
    kube_admin get node "$name" >/dev/null || {
        kube_log "kube_node_token_kubeconfig: there is no Node $name to bind a token to"
        return 1
    }
    token=$(kube_admin -n shimkeeper-system create token shimkeeper-node \
        --bound-object-kind Node --bound-object-name "$name" --duration "$duration") || return 1
    kube_token_kubeconfig "$name-bound" "$token" "$name"
}

kube_add_identity() {
    local identity=$1 user=$2 groups=$3 token
    token=$(openssl rand -hex 16)
    printf '%s,%s,%s,"%s"\n' "$token" "$user" "uid-$identity" "$groups" >>"$KUBE_DIR/tokens.csv"
    mkdir -p "$KUBE_DIR/kubeconfig"
    cat >"$(kube_kubeconfig "$identity")" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: test
    cluster:
      server: $KUBE_SERVER
      certificate-authority: $KUBE_CA
users:
  - name: $identity
    user:
      token: $token
contexts:
  - name: $identity
    context: {cluster: test, user: $identity}
current-context: $identity
EOF
}

kube_start_etcd() {
    local client_port=$1 peer_port=$2
    mkdir -p "$KUBE_DIR/etcd"
    # --unsafe-no-fsync: the data is thrown away with the test; fsyncs only slow the test bed.
    "$KUBE_BIN/etcd" --name test --data-dir "$KUBE_DIR/etcd" \
        --listen-client-urls "http://127.0.0.1:$client_port" \
        --advertise-client-urls "http://127.0.0.1:$client_port" \
        --listen-peer-urls "http://127.0.0.1:$peer_port" \
        --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
        --initial-cluster "test=http://127.0.0.1:$peer_port" \
        --unsafe-no-fsync --log-level warn >"$KUBE_DIR/log/etcd.log" 2>&1 &
    KUBE_ETCD_PID=$!
}

# On SIGTERM the API server ends its open watches itself within
# --shutdown-watch-termination-grace-period; left at its default (0), it waited for its watchers
# (agents, coordinators, kubelets) to hang up, and kube_stop_pid killed it after 20 s: in every
# scenario's teardown and every restart, a third of the cluster label's time.
kube_start_apiserver() {
    local port=$1 etcd_port=$2
    "$KUBE_BIN/kube-apiserver" \
        --bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port "$port" \
        --etcd-servers "http://127.0.0.1:$etcd_port" \
        --tls-cert-file "$KUBE_DIR/pki/apiserver.crt" \
        --tls-private-key-file "$KUBE_DIR/pki/apiserver.key" \
        --client-ca-file "${KUBE_CLIENT_CA:-$KUBE_CA}" \
        --token-auth-file "$KUBE_DIR/tokens.csv" \
        --service-account-issuer https://kubernetes.default.svc \
        --service-account-key-file "$KUBE_DIR/pki/sa.pub" \
        --service-account-signing-key-file "$KUBE_DIR/pki/sa.key" \
        --service-cluster-ip-range 10.96.0.0/24 \
        --authorization-mode Node,RBAC \
        --enable-admission-plugins NodeRestriction \
        --cert-dir "$KUBE_DIR/pki/generated" \
        --shutdown-watch-termination-grace-period 2s \
        --profiling=false --v 1 ${KUBE_APISERVER_EXTRA_ARGS:-} \
        >"$KUBE_DIR/log/kube-apiserver.log" 2>&1 &
    KUBE_APISERVER_PID=$!
}

kube_pid_alive() {
    kill -0 "$1" 2>/dev/null
}

# The admin's GET /readyz, polled while the API server starts, in every scenario.
kube_ready() {
    [[ $(kube_get /readyz 2>/dev/null) == ok ]]
}

kube_ready_or_dead() {
    kube_ready || ! kube_pid_alive "$KUBE_APISERVER_PID" || ! kube_pid_alive "$KUBE_ETCD_PID"
}

kube_up() {
    local dir
    mkdir -p "$1"
    dir=$(readlink -f "$1")
    export KUBE_DIR=$dir
    mkdir -p "$dir/log"
    # kubectl's discovery cache stays with this control plane instead of ~/.kube.
    export KUBECACHEDIR=$dir/kubectl-cache
    local ports etcd_port etcd_peer_port apiserver_port
    ports=$(kube_free_ports 3)
    read -r etcd_port etcd_peer_port apiserver_port <<<"$ports"
    export KUBE_SERVER=https://127.0.0.1:$apiserver_port
    # For a test that stops the API server and starts it again on the same address.
    export KUBE_APISERVER_PORT=$apiserver_port KUBE_ETCD_PORT=$etcd_port
    kube_write_pki
    kube_write_tokens
    export KUBECONFIG_ADMIN KUBECONFIG_COORDINATOR
    KUBECONFIG_ADMIN=$(kube_kubeconfig admin)
    KUBECONFIG_COORDINATOR=$(kube_kubeconfig coordinator)

    # An EXIT trap set before this one runs after the control plane is down.
    KUBE_PREVIOUS_EXIT_TRAP=$(trap -p EXIT | sed -n "s/^trap -- '\(.*\)' EXIT\$/\1/p")
    [[ $KUBE_PREVIOUS_EXIT_TRAP == kube_down ]] && KUBE_PREVIOUS_EXIT_TRAP=""
    trap kube_down EXIT

    kube_start_etcd "$etcd_port" "$etcd_peer_port"
    kube_start_apiserver "$apiserver_port" "$etcd_port"
    # A cold start on a busy two-core machine takes up to half a minute; give it two.
    local start=$SECONDS
    if ! kube_wait_for 120 kube_ready_or_dead || ! kube_ready; then
        kube_log "kube-apiserver did not become ready; see $dir/log/kube-apiserver.log and" \
            "$dir/log/etcd.log"
        tail -n 20 "$dir/log/kube-apiserver.log" >&2
        return 1
    fi
    kube_log "kube-apiserver ready at $KUBE_SERVER after $((SECONDS - start)) s"

    # Every object of deploy/ but the coordinator's Deployment: the tests run their coordinators
    # as processes of their own (coordinator_process.sh), and where a real kubelet runs
    # (kube_node.sh) two more coordinators would compete in their election.
    local files=() file manifests=${SHIMKEEPER_SOURCE_DIR:?}/deploy
    if [[ -n ${KUBE_CHART_SET:-} ]]; then
        kube_render_chart "$dir/chart" $KUBE_CHART_SET || return 1
        manifests=$dir/chart
    fi
    for file in "$manifests"/*.yaml; do
        [[ $file == */60-coordinator.yaml ]] || files+=(-f "$file")
    done
    kube_admin apply "${files[@]}" >"$dir/log/deploy-apply.log" 2>&1 || {
        kube_log "applying deploy/ failed:"
        cat "$dir/log/deploy-apply.log" >&2
        return 1
    }
    kube_admin wait --for condition=Established --timeout 60s \
        crd/shims.containerd.x-k8s.io >/dev/null
    # Established means the apiserver serves the resource; discovery (what kubectl resolves
    # "shims" with) follows a moment later.
    kube_wait_for 60 kube_admin get shims || {
        kube_log "the shims resource never appeared in discovery"
        return 1
    }
}

kube_proxy_start() {
    python3 "$SHIMKEEPER_SOURCE_DIR/tests/support/pausable_proxy.py" 127.0.0.1 "${KUBE_SERVER##*:}" \
        "$KUBE_DIR/proxy.port" "$KUBE_DIR/proxy.state" 2>"$KUBE_DIR/proxy.err" &
    KUBE_PROXY=$!
    sk_track $KUBE_PROXY
    kube_wait_for 10 test -s "$KUBE_DIR/proxy.port" || {
        kube_log "the proxy did not listen: $(cat "$KUBE_DIR/proxy.err")"
        return 1
    }
}

kube_proxy_is() { [[ "$(cat "$KUBE_DIR/proxy.state")" == "$1" ]]; }

kube_proxied_kubeconfig() {
    local port
    port=$(cat "$KUBE_DIR/proxy.port")
    sed "s|server: $KUBE_SERVER|server: https://127.0.0.1:$port|" "$1" >"$2"
    grep -q "127.0.0.1:$port" "$2" || {
        kube_log "the proxied kubeconfig does not name the proxy: $(cat "$2")"
        return 1
    }
}

# kube_render_chart DIR KEY=VALUE...: the chart rendered into DIR, a file per template as in
# deploy/, with the namespace object and the values given.
kube_render_chart() {
    local out=$1 helm_dir value
    shift
    helm_dir=$("$SHIMKEEPER_SOURCE_DIR/scripts/build-helm" --cached-only) || {
        kube_log "helm is not built (scripts/build-helm): cannot render the chart with $*"
        return 1
    }
    local -a set=(--set createNamespace=true)
    for value in "$@"; do
        set+=(--set "$value")
    done
    HELM_CACHE_HOME=$out.helm/cache HELM_CONFIG_HOME=$out.helm/config HELM_DATA_HOME=$out.helm/data \
        "$helm_dir/helm" template shimkeeper "$SHIMKEEPER_SOURCE_DIR/deploy/helm/shimkeeper" \
        --namespace shimkeeper-system "${set[@]}" --output-dir "$out.rendered" >/dev/null || return 1
    mkdir -p "$out"
    mv "$out.rendered"/shimkeeper/templates/*.yaml "$out/"
}

kube_stop_pid() {
    local pid=$1
    [[ -n $pid ]] || return 0
    kill "$pid" 2>/dev/null || return 0
    local deadline=$((SECONDS + 20))
    while kube_pid_alive "$pid" && ((SECONDS < deadline)); do
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    # Its exit status is the signal's, not a failure of ours (callers may run under set -e).
    wait "$pid" 2>/dev/null || true
}

kube_down() {
    local rc=$?
    set +e
    trap - EXIT
    kube_stop_pid "${KUBE_APISERVER_PID:-}"
    kube_stop_pid "${KUBE_ETCD_PID:-}"
    if [[ -n ${KUBE_DIR:-} && -d $KUBE_DIR ]]; then
        # sk_failure_expected is common.sh's, which not every scenario sources.
        if ((rc == 0 || rc == 77)) || { declare -F sk_failure_expected >/dev/null && sk_failure_expected; }; then
            rm -rf "$KUBE_DIR"
        else
            kube_log "test failed (exit $rc); the control plane's files are kept in $KUBE_DIR"
        fi
    fi
    if [[ -n ${KUBE_PREVIOUS_EXIT_TRAP:-} ]]; then
        (exit "$rc")
        eval "$KUBE_PREVIOUS_EXIT_TRAP"
    fi
    exit "$rc"
}
