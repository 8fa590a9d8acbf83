#!/usr/bin/env bash
# The cluster test bed itself. What every other cluster test relies on:
#   - etcd and kube-apiserver come up on 127.0.0.1 and answer /readyz;
#   - /version and `kubectl version` report the pinned Kubernetes release (the version the
#     tests claim to run against is the one that runs);
#   - deploy/ applies cleanly and `kubectl get shims` answers, for the admin and the agent;
#   - a Node created through the harness exists with its labels.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
kube_require_peers
kube_up "$(mktemp -d /tmp/sk-kube.XXXXXX)"

check() {
    local what=$1
    shift
    if "$@"; then
        echo "ok: $what"
    else
        echo "FAIL: $what" >&2
        exit 1
    fi
}

pinned=$(sed -n 's/^\tk8s.io\/kubernetes \(v[0-9.]*\).*/\1/p' \
    "$SHIMKEEPER_SOURCE_DIR/tests/peers/kube/go.mod")
[[ -n $pinned ]] || { echo "FAIL: no k8s.io/kubernetes version in tests/peers/kube/go.mod" >&2; exit 1; }

server_version=$(kube_admin get --raw /version)
echo "$server_version"
check "/version reports gitVersion $pinned" grep -q "\"gitVersion\": \"$pinned\"" <<<"$server_version"
minor=${pinned#v*.}
minor=${minor%%.*}
check "/version reports minor $minor" grep -q "\"minor\": \"$minor\"" <<<"$server_version"

client_version=$(kube_admin version --client -o json)
check "kubectl version --client reports $pinned" \
    grep -q "\"gitVersion\": \"$pinned\"" <<<"$client_version"
check "kubectl version reports the server as $pinned" \
    grep -q "Server Version: $pinned" <<<"$(kube_admin version)"

check "etcd --version names the release the apiserver pins" \
    grep -q "etcd Version: $(sed -n 's/^\tgo.etcd.io\/etcd\/server\/v3 v\([0-9.]*\).*/\1/p' \
        "$SHIMKEEPER_SOURCE_DIR/tests/peers/kube/go.mod")" <<<"$("$KUBE_BIN/etcd" --version)"

check "the admin lists shims (none yet)" test -z "$(kube_admin get shims -o name)"
check "the coordinator lists shims" kube_as coordinator get shims
crd_scope=$(kube_admin get crd shims.containerd.x-k8s.io -o jsonpath='{.spec.scope}')
check "the Shim CRD is cluster-scoped (got $crd_scope)" test "$crd_scope" = Cluster
check "deploy/ made the node agents' and the coordinator's ServiceAccounts" \
    kube_admin -n shimkeeper-system get serviceaccount shimkeeper-node shimkeeper-coordinator
check "shimkeeper's FlowSchema points at workload-high" test "$(kube_admin get flowschema \
    shimkeeper -o jsonpath='{.spec.priorityLevelConfiguration.name}')" = workload-high

kube_create_node node-a wasm=true
check "kube_create_node made node-a with its label" test "$(kube_admin get node node-a \
    -o jsonpath='{.metadata.labels.wasm}')" = true
