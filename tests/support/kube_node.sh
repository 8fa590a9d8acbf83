# shellcheck shell=bash
# A real Kubernetes node in the test bed: kube-controller-manager and kube-scheduler beside the
# test API server (kube_harness.sh), and a kubelet whose CRI runtime is the sandbox node's
# containerd (node_harness.sh, line 2: kubelet 1.36 wants containerd 2.x's RuntimeConfig, which
# Debian's 1.6 lacks). All three are built from the pinned Kubernetes module by
# scripts/build-kube-peers. Source after kube_harness.sh and node_harness.sh, then, after kube_up
# and node_up:
#
#   kube_node_require                  # exit 77 without the built kubelet, scheduler, CNI plugins
#   kube_node_up NAME [KEY=VALUE...]   # images imported, CNI network, controller manager,
#                                      # scheduler, and a kubelet registering Node NAME with those
#                                      # labels; waits until the Node is Ready. kube_node_down
#                                      # runs on EXIT before node_down and kube_down.
#   kube_node_pod_yaml NAME RUNTIME_CLASS   # a Pod of the workload image on stdout
#
# Exports after kube_node_up: KUBE_NODE_NAME, KUBE_NODE_KUBECONFIG (the kubelet's own client
# certificate, CN system:node:NAME, O system:nodes, from the test CA: the credential the node's
# agent uses too), KUBE_NODE_WORKLOAD_IMAGE, KUBE_NODE_ROOT (the kubelet's --root-dir).
#
# What this machine needs, found on a 2-core Debian 12 VM (cgroup v1, PID 1 not systemd, no swap,
# no registry reachable):
#   - KubeletConfiguration: failCgroupV1 false (1.36 refuses cgroup v1 otherwise), cgroupDriver
#     cgroupfs (containerd's runc default, SystemdCgroup false), cgroupsPerQOS false and
#     enforceNodeAllocatable [] (no QoS cgroup tree to build), failSwapOn false. Pods' cgroups go
#     under cgroupRoot, the node's own NODE_CGROUP_PARENT, which node_down removes.
#   - Hard eviction thresholds are tiny absolute amounts: a nearly full shared disk must not give
#     the Node DiskPressure (a taint) and make the scenario flaky.
#   - Images: none can be pulled. The sandbox (pause) image and a workload image are built from
#     Debian's busybox-static (node_images.sh) and imported into containerd's k8s.io namespace.
#     kubelet 1.36 has no --pod-infra-container-image: the sandbox image is containerd's CRI
#     `sandbox` setting alone, which node_harness.sh points at the imported pause image. Pods use
#     imagePullPolicy Never.
#   - Network: a CNI config of Debian's containernetworking-plugins (bridge, host-local,
#     loopback; ipMasq off, no gateway: Pods talk to nothing) in the node's own conf dir, with a
#     bridge and a /24 of its own so that runs side by side never share one. Without it the
#     kubelet reports NetworkReady=false and the Node stays NotReady.
#   - No kube-proxy: the `kubernetes` Service's ClusterIP leads nowhere. A Pod that needs the API
#     server uses hostNetwork and the API server's own address (127.0.0.1), given to it; or, set
#     before kube_node_up, KUBE_NODE_SUBNET (a /24 from kube_node_free_subnet) and
#     KUBE_NODE_POD_GATEWAY=true give the bridge the subnet's .1 (KUBE_NODE_GATEWAY), which Pods
#     reach and the kubelet's probes come from, for a forwarder to the API server listening there.
#   - Private mounts: the kubelet mounts Pod volumes under its --root-dir (inside NODE_DIR) and
#     writes log links to the fixed /var/log/containers; containerd's CNI keeps results in the fixed
#     /var/lib/cni and network namespaces in /run/netns. A tmpfs on each, in the node's private
#     mount namespace, keeps them off the host (which is left only those folders, empty).
#     kube_node_down unmounts everything under the root dir before node_down removes the folder.
#   - The kubelet serves on 127.0.0.1 only and refuses a loopback node IP for the Node's
#     addresses (its log says so every status update), so `kubectl logs`/`exec` do not reach it;
#     the scenarios need neither.
#   - Ports: every listener (kubelet, its healthz, the controller manager's and scheduler's secure
#     ports) takes a free port on 127.0.0.1; ctest runs cluster scenarios two at a time.

# Where Debian's containernetworking-plugins puts the plugins.
k_kube_node_cni_bin=/usr/lib/cni

kube_node_log() { printf '[kube-node] %s\n' "$*" >&2; }

kube_node_require() {
    local program
    for program in kubelet kube-scheduler kube-controller-manager; do
        [[ -x $KUBE_BIN/$program ]] ||
            kube_skip "$KUBE_BIN has no $program: run scripts/build-kube-peers"
    done
    [[ ${NODE_CONTAINERD_LINE:-} == 2* ]] ||
        kube_skip "the kubelet needs containerd 2.x: set SHIMKEEPER_CONTAINERD_LINE=2"
    for program in bridge host-local loopback; do
        [[ -x $k_kube_node_cni_bin/$program ]] ||
            kube_skip "$k_kube_node_cni_bin/$program is missing (containernetworking-plugins)"
    done
    command -v ip >/dev/null || kube_skip "ip is not installed (iproute2)"
}

kube_node_up() {
    local name=$1 start=$SECONDS
    shift
    export KUBE_NODE_NAME=$name KUBE_NODE_ROOT=$NODE_DIR/kubelet
    # Runs first on EXIT: the kubelet stops before containerd, the control plane after both.
    KUBE_NODE_PREVIOUS_EXIT_TRAP=$(trap -p EXIT | sed -n "s/^trap -- '\(.*\)' EXIT\$/\1/p")
    trap kube_node_down EXIT
    kube_node_private_mounts
    kube_node_images || return 1
    kube_node_network || return 1
    local ports
    ports=$(kube_free_ports 4)
    read -r KUBE_NODE_KUBELET_PORT KUBE_NODE_HEALTHZ_PORT KUBE_NODE_KCM_PORT \
        KUBE_NODE_SCHEDULER_PORT <<<"$ports"
    kube_node_start_controller_manager
    kube_node_start_scheduler
    KUBE_NODE_KUBECONFIG=$(kube_node_cert_kubeconfig "$name")
    export KUBE_NODE_KUBECONFIG
    kube_node_start_kubelet "$@"
    kube_node_wait_ready || return 1
    kube_node_log "Node $name Ready after $((SECONDS - start)) s"
}

# Fixed host paths the kubelet and containerd's CNI write (log links, network namespaces, the CNI
# result cache), private to this node's mount namespace.
kube_node_private_mounts() {
    local dir
    for dir in /var/log/containers /run/netns /var/lib/cni; do
        mkdir -p "$dir"
        mount -t tmpfs -o mode=0755 tmpfs "$dir"
    done
}

kube_node_images() {
    node_pause_image >/dev/null || return 1
    KUBE_NODE_WORKLOAD_IMAGE=$(node_workload_image) || return 1
    export KUBE_NODE_WORKLOAD_IMAGE
}

# kube_node_network: the CNI plugins linked into containerd's bin dir and a one-file conflist in
# its conf dir (both inside NODE_DIR, see node_write_containerd_config), on a bridge and subnet
# no other interface of the machine uses.
kube_node_network() {
    local plugin subnet bridge
    for plugin in bridge host-local loopback; do
        ln -sf "$k_kube_node_cni_bin/$plugin" "$NODE_DIR/opt/cni/bin/$plugin"
    done
    bridge=skb$(printf '%s' "$NODE_DIR" | sha256sum | cut -c1-8)
    subnet=${KUBE_NODE_SUBNET:-$(kube_node_free_subnet)} || {
        kube_node_log "no free 10.x.y.0/24 for the Pod network"
        return 1
    }
    KUBE_NODE_BRIDGE=$bridge
    export KUBE_NODE_GATEWAY=${subnet%.0/24}.1
    cat >"$NODE_DIR/etc/cni/net.d/10-shimkeeper-test.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "shimkeeper-test",
  "plugins": [
    {"type": "bridge", "bridge": "$bridge", "isGateway": ${KUBE_NODE_POD_GATEWAY:-false}, "ipMasq": false,
     "ipam": {"type": "host-local", "ranges": [[{"subnet": "$subnet"}]],
              "dataDir": "$NODE_DIR/var/lib/cni/networks"}},
    {"type": "loopback"}
  ]
}
EOF
}

# A 10.x.y.0/24 (x in 200..249) that no address of this machine is in.
kube_node_free_subnet() {
    local used x y
    used=$(ip -4 -o addr show | awk '{ print $4 }')
    for _ in $(seq 1 50); do
        x=$((200 + RANDOM % 50)) y=$((RANDOM % 256))
        grep -q "^10\.$x\.$y\." <<<"$used" && continue
        echo "10.$x.$y.0/24"
        return 0
    done
    return 1
}

# kube_node_component_kubeconfig IDENTITY CN: a kubeconfig with a client certificate of the test
# CA for user CN (the name the RBAC bootstrap roles are bound to); prints its path.
kube_node_component_kubeconfig() {
    local identity=$1 cn=$2 dir=$KUBE_DIR/pki/$1
    mkdir -p "$dir"
    openssl req -newkey rsa:2048 -nodes -subj "/CN=$cn" \
        -keyout "$dir/key.pem" -out "$dir/csr.pem" 2>/dev/null
    openssl x509 -req -in "$dir/csr.pem" -CA "$KUBE_CA" -CAkey "$KUBE_DIR/pki/ca.key" \
        -CAcreateserial -days 2 -out "$dir/cert.pem" 2>/dev/null
    kube__write_kubeconfig "$identity" "$cn" \
        "{client-certificate: $dir/cert.pem, client-key: $dir/key.pem}"
    kube_kubeconfig "$identity"
}

# Controllers act with ServiceAccount tokens of their own (as kubeadm runs them), which the
# controller manager requests with its own identity; it publishes kube-root-ca.crt and creates
# each namespace's default ServiceAccount, which every Pod needs.
kube_node_start_controller_manager() {
    local kubeconfig pki=$KUBE_DIR/pki
    kubeconfig=$(kube_node_component_kubeconfig controller-manager system:kube-controller-manager)
    "$KUBE_BIN/kube-controller-manager" --kubeconfig "$kubeconfig" \
        --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
        --bind-address 127.0.0.1 --secure-port "$KUBE_NODE_KCM_PORT" \
        --cert-dir "$pki/controller-manager/serving" \
        --leader-elect=false --use-service-account-credentials \
        --service-account-private-key-file "$pki/sa.key" --root-ca-file "$KUBE_CA" \
        --cluster-signing-cert-file "$KUBE_CA" --cluster-signing-key-file "$pki/ca.key" \
        --v 1 >"$KUBE_DIR/log/kube-controller-manager.log" 2>&1 &
    KUBE_NODE_KCM_PID=$!
}

kube_node_start_scheduler() {
    local kubeconfig
    kubeconfig=$(kube_node_component_kubeconfig scheduler system:kube-scheduler)
    "$KUBE_BIN/kube-scheduler" --kubeconfig "$kubeconfig" \
        --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
        --bind-address 127.0.0.1 --secure-port "$KUBE_NODE_SCHEDULER_PORT" \
        --cert-dir "$KUBE_DIR/pki/scheduler/serving" \
        --leader-elect=false --v 1 >"$KUBE_DIR/log/kube-scheduler.log" 2>&1 &
    KUBE_NODE_SCHEDULER_PID=$!
}

# kube_node_start_kubelet [KEY=VALUE...]: the kubelet, registering Node KUBE_NODE_NAME with those
# labels (non-reserved keys: NodeRestriction lets a kubelet set them on its own Node).
kube_node_start_kubelet() {
    local labels config=$NODE_DIR/kubelet-config.yaml
    labels=$(
        IFS=,
        echo "$*"
    )
    mkdir -p "$KUBE_NODE_ROOT" "$NODE_DIR/log/pods"
    cat >"$config" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: $KUBE_NODE_KUBELET_PORT
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: $KUBE_NODE_HEALTHZ_PORT
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: false}
  x509: {clientCAFile: $KUBE_CA}
authorization: {mode: AlwaysAllow}
containerRuntimeEndpoint: unix://$NODE_SOCKET
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupsPerQOS: false
cgroupRoot: $NODE_CGROUP_PARENT
enforceNodeAllocatable: []
failSwapOn: false
podLogsDir: $NODE_DIR/log/pods
volumePluginDir: $KUBE_NODE_ROOT/volume-plugins
evictionHard: {memory.available: 1Mi, nodefs.available: 1Mi, imagefs.available: 1Mi, nodefs.inodesFree: "1"}
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
EOF
    kube_node__supervise "$NODE_DIR/log/kubelet.log" \
        "$KUBE_BIN/kubelet" --config "$config" --kubeconfig "$KUBE_NODE_KUBECONFIG" \
        --root-dir "$KUBE_NODE_ROOT" --hostname-override "$KUBE_NODE_NAME" --node-ip 127.0.0.1 \
        ${labels:+--node-labels "$labels"} --v 1 &
    KUBE_NODE_KUBELET_PID=$!
}

# kube_node__supervise LOG COMMAND...: runs COMMAND, its output appended to LOG, and starts it
# again a second after it exits, as a node's kubelet.service (Restart=always) does; a TERM stops
# both. The kubelet is the one so run: 1.36.4 panicked once (a nil pointer in
# doPodResizeAction, "Missing actuated pod level resource record") on the sync after a sandbox's
# creation failed because containerd was restarting, which shimkeeper's restarts make likely.
kube_node__supervise() {
    local log=$1 child
    shift
    trap 'kill "$child" 2>/dev/null; wait "$child"; exit 0' TERM
    while true; do
        "$@" >>"$log" 2>&1 &
        child=$!
        wait "$child" || echo "supervisor: $1 exited with status $?; started again in 1 s" >>"$log"
        sleep 1
    done
}

kube_node_is_ready() {
    [[ $(kube_admin get node "$KUBE_NODE_NAME" \
        -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}' 2>/dev/null) == True ]] &&
        kube_admin -n default get serviceaccount default >/dev/null 2>&1
}

kube_node_ready_or_dead() {
    kube_node_is_ready || ! kube_pid_alive "$KUBE_NODE_KUBELET_PID" ||
        ! kube_pid_alive "$KUBE_NODE_KCM_PID" || ! kube_pid_alive "$KUBE_NODE_SCHEDULER_PID"
}

# The Node Ready (and the not-ready taint gone: the scheduler would skip it), the default
# ServiceAccount made: Pods can be created and scheduled.
kube_node_wait_ready() {
    local log
    if kube_wait_for 180 kube_node_ready_or_dead && kube_node_is_ready &&
        kube_wait_for 60 kube_node_untainted; then
        return 0
    fi
    kube_node_log "Node $KUBE_NODE_NAME is not Ready and schedulable:" \
        "$(kube_admin get node "$KUBE_NODE_NAME" -o jsonpath='{.status.conditions}{.spec.taints}' 2>&1)"
    for log in "$NODE_DIR/log/kubelet.log" "$KUBE_DIR/log/kube-controller-manager.log" \
        "$KUBE_DIR/log/kube-scheduler.log"; do
        kube_node_log "--- $log"
        grep -E '^[EF]' "$log" | tail -n 10 >&2
    done
    return 1
}

kube_node_untainted() {
    [[ -z $(kube_admin get node "$KUBE_NODE_NAME" -o jsonpath='{.spec.taints}') ]]
}

# kube_node_pod_under_shim POD RUNTIME BINARY: POD's first container runs on containerd runtime
# RUNTIME, and its process's parent is BINARY from the node's store (the installed shim), or it
# fails naming what differs. Sets POD_CONTAINER, POD_PID, POD_SHIM_PID and POD_SHIM_EXE.
kube_node_pod_under_shim() {
    local pod=$1 runtime=$2 binary=$3 got
    POD_CONTAINER=$(kube_admin get pod "$pod" -o jsonpath='{.status.containerStatuses[0].containerID}')
    POD_CONTAINER=${POD_CONTAINER#containerd://}
    got=$(ctr -a "$NODE_SOCKET" -n k8s.io containers info "$POD_CONTAINER" 2>/dev/null | jq -r .Runtime.Name) ||
        fail "containerd has no container '$POD_CONTAINER' for Pod $pod"
    [[ $got == "$runtime" ]] || fail "Pod $pod's container runs on runtime '$got', not $runtime"
    POD_PID=$(ctr -a "$NODE_SOCKET" -n k8s.io tasks ls 2>/dev/null |
        awk -v id="$POD_CONTAINER" '$1 == id { print $2 }')
    [[ -n $POD_PID ]] || fail "no containerd task for Pod $pod's container $POD_CONTAINER"
    POD_SHIM_PID=$(ps -o ppid= -p "$POD_PID" | tr -d ' ')
    POD_SHIM_EXE=$(readlink "/proc/$POD_SHIM_PID/exe")
    [[ $POD_SHIM_EXE == "$NODE_STORE_DIR/store/sha256/"*/"$binary" ]] ||
        fail "Pod $pod's process $POD_PID runs under $POD_SHIM_EXE, not the installed $binary"
}

# kube_node_pod_yaml NAME RUNTIME_CLASS: a Pod of the workload image in namespace default that
# asks for RUNTIME_CLASS, and nothing else (no node name, no selector: the RuntimeClass's
# scheduling and the scheduler decide where it goes).
kube_node_pod_yaml() {
    cat <<EOF
apiVersion: v1
kind: Pod
metadata: {name: $1, namespace: default}
spec:
  runtimeClassName: $2
  terminationGracePeriodSeconds: 5
  containers:
    - name: sleep
      image: $KUBE_NODE_WORKLOAD_IMAGE
      imagePullPolicy: Never
EOF
}

kube_node_down() {
    local status=$? mount
    trap - EXIT ERR
    set +e
    kube_stop_pid "${KUBE_NODE_KUBELET_PID:-}"
    kube_stop_pid "${KUBE_NODE_SCHEDULER_PID:-}"
    kube_stop_pid "${KUBE_NODE_KCM_PID:-}"
    if [[ -n ${KUBE_NODE_ROOT:-} ]]; then
        # Innermost first: Pod volumes are mounted inside one another's folders, and the kubelet
        # bind-mounts its root dir onto itself. Pods still running at the end (a Deployment's)
        # keep their sandboxes' /dev/shm mounts in containerd's state folder too.
        findmnt -rn -o TARGET |
            grep -E -e "^$KUBE_NODE_ROOT(/|\$)" -e "^$NODE_DIR/run/containerd/io\.containerd\.grpc\.v1\.cri/sandboxes/" |
            sort -r | while read -r mount; do
            umount "$mount" 2>/dev/null || umount -l "$mount"
        done
    fi
    [[ -n ${KUBE_NODE_BRIDGE:-} ]] && ip link del "$KUBE_NODE_BRIDGE" 2>/dev/null
    (exit "$status")
    eval "$KUBE_NODE_PREVIOUS_EXIT_TRAP"
}
