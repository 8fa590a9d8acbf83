#!/usr/bin/env bash
# The kubelet's credential as the kubelet keeps it, used by a running agent across a rotation. One
# real sandboxed node (systemd --user + containerd), its agent a Type=notify unit:
#   - the agent's kubeconfig is laid out as the kubelet's: client-certificate and client-key both
#     name kubelet-client-current.pem, a symlink to a dated file holding key and certificate;
#     [kube] names no node: the certificate's CN system:node:node-a does;
#   - with it the agent installs a cluster Shim and labels its Node;
#   - the certificate rotated the kubelet's way: a new dated file, signed by a new CA, and the
#     symlink switched in one rename; the API server restarted trusting only the new CA (the old
#     certificate is refused from then on, checked with curl);
#   - a second Shim applied: the agent installs it and labels its Node with the new certificate,
#     and was never restarted for it (same MainPID, NRestarts 0).
# seconds-about: 100
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/node_shim.sh"
kube_require_peers
node_reexec_in_namespace "$@"
sk_init
kube_up "$T/kube"
node_shim_serve
node_shim_artifact demo v1
node_shim_artifact second v1

kube_create_node node-a
kubeconfig=$(kube_node_cert_kubeconfig node-a)
pki=$KUBE_DIR/pki/node-node-a # kube_node_cert_kubeconfig's folder for node-a
# The kubelet's layout: kubelet-client-<stamp>.pem, and kubelet-client-current.pem linking to it.
mv "$pki/kubelet-client-current.pem" "$pki/kubelet-client-2026-11-29-10-00-00.pem"
ln -s kubelet-client-2026-11-29-10-00-00.pem "$pki/kubelet-client-current.pem"
node_up "$T/a"
node_agent_start_in_cluster "$kubeconfig"
agent_log=$NODE_DIR/log/agent.log
unit=shimkeeper-agent.service
unit_line() {
    local p
    for p in NRestarts MainPID ActiveState; do printf '%s=%s ' "$p" "$(systemctl --user show -p "$p" --value "$unit")"; done
}

labelled() { [[ -n "$(kube_admin get node node-a -o jsonpath="{.metadata.labels.shim\.containerd\.x-k8s\.io/$1}")" ]]; }
kube_shim_yaml demo "$SERVER_URL/demo-v1.tar.gz" "$(node_shim_digest demo v1)" | kube_admin apply -f - >/dev/null
kube_wait_for 120 labelled demo || fail "node-a was not labelled for demo: $(tail -n 30 "$agent_log")"
node_cri_has_handler demo || fail "CRI does not list demo"
before=$(unit_line)
[[ $before == "NRestarts=0 "*"ActiveState=active " ]] || fail "the agent's unit: $before"

echo "--- the certificate rotated to a new CA, the API server trusting only that CA"
(
    cd "$pki"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=shimkeeper-test-ca-2" \
        -keyout ca2.key -out ca2.crt 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -subj "/O=system:nodes/CN=system:node:node-a" \
        -keyout key2.pem -out csr2.pem 2>/dev/null
    openssl x509 -req -in csr2.pem -CA ca2.crt -CAkey ca2.key -CAcreateserial -days 2 \
        -out cert2.pem 2>/dev/null
    cat key2.pem cert2.pem >kubelet-client-2026-11-29-11-00-00.pem
    ln -s kubelet-client-2026-11-29-11-00-00.pem kubelet-client-current.pem.new
    mv -T kubelet-client-current.pem.new kubelet-client-current.pem
) || fail "making the rotated certificate failed"
kube_stop_pid "$KUBE_APISERVER_PID"
KUBE_CLIENT_CA=$pki/ca2.crt
kube_start_apiserver "$KUBE_APISERVER_PORT" "$KUBE_ETCD_PORT"
kube_wait_for 120 kube_ready || fail "the API server did not come back"
# cert_answers PEM: the HTTP status of GET /api/v1/nodes/node-a with that key and certificate.
cert_answers() {
    curl -s -o /dev/null -w '%{http_code}' --cacert "$KUBE_CA" --cert "$1" --key "$1" \
        "$KUBE_SERVER/api/v1/nodes/node-a"
}
[[ $(cert_answers "$pki/kubelet-client-2026-11-29-10-00-00.pem") == 401 ]] ||
    fail "the old certificate is not refused: the rotation proves nothing"
[[ $(cert_answers "$pki/kubelet-client-current.pem") == 200 ]] ||
    fail "the new certificate is not accepted: $(cert_answers "$pki/kubelet-client-current.pem")"

kube_shim_yaml second "$SERVER_URL/second-v1.tar.gz" "$(node_shim_digest second v1)" | kube_admin apply -f - >/dev/null
kube_wait_for 120 labelled second ||
    fail "node-a was not labelled for the Shim applied after the rotation: $(tail -n 30 "$agent_log")"
node_cri_has_handler second || fail "CRI does not list second"
labelled demo || fail "node-a lost its demo label"
[[ $(unit_line) == "$before" ]] || fail "the agent was restarted: $before, now $(unit_line)"
echo "PASS: the running agent used the rotated kubelet certificate"
