#!/usr/bin/env bash
# With [kube] in shimkeeper.toml, the desired state is the node's shims.d/ files plus the Shims that
# select its Node, read from a real kube-apiserver. On an image root (apply --no-restart):
#   - a Shim whose nodeSelector matches node-a's labels is planned and installed from its
#     artifact on the local server; one that selects other nodes is not;
#   - a Shim that clashes with a file in shims.d/ yields to the file, with a warning;
#   - deleting the Shim uninstalls it: the config gets its original bytes back;
#   - the Node is told: `installing` (applied with --no-restart), no label;
#   - the Node's machineID must be this root's /etc/machine-id;
#   - without [kube] node_name, a kubelet client certificate's CN system:node:<name> names the
#     node (the hostname does not);
#   - an unreachable API server: the Shims last read stand in (nothing changes, status says since
#     when); on a node that never read the cluster it is an error that changes nothing.
# seconds-about: 20
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
kube_require_peers
sk_init
kube_up "$T/kube"

mkdir -p "$T/www" "$ROOT/etc/containerd"
make_shim_archive "$(shim_binary_for demo)" "$T/www/demo.tar.gz"
make_shim_archive "$(shim_binary_for other)" "$T/www/other.tar.gz"
sk_start_server "$T/www"
config="$ROOT/etc/containerd/config.toml"
containerd config default >"$config"
cp "$config" "$T/original.toml"

kube_create_node node-a wasm=true
kube_create_node node-b
node_a_kubeconfig=$(kube_node_token_kubeconfig node-a)
cat >"$ROOT/etc/shimkeeper/shimkeeper.toml" <<TOML
[kube]
kubeconfig = "$node_a_kubeconfig"
node_name = "node-a"
TOML

# shim_object NAME SELECTOR_JSON: a Shim serving NAME's archive from the local server.
shim_object() {
    kube_shim_yaml "$1" "$SERVER_URL/$1.tar.gz" "$(sha256_of "$T/www/$1.tar.gz")" "  nodeSelector: $2"
}
shim_object demo '{wasm: "true"}' | kube_admin apply -f - >/dev/null
shim_object other '{gpu: "true"}' | kube_admin apply -f - >/dev/null

expect_exit 0 sk plan
expect_output_contains "install demo (handler demo)"
expect_output_lacks "install other"
expect_exit 0 sk status
expect_output_contains "Shim/demo (generation 1): selects this node, nodeSelector wasm=true matches"
expect_output_contains "Shim/other (generation 1): does not select this node"
expect_exit 0 sk apply --no-restart
expect_output_contains "Committed generation 1"
grep -qF 'runtimes.demo]' "$config" || fail "the selected Shim's runtime is not in the config"
! grep -qF 'runtimes.other]' "$config" || fail "a Shim selecting other nodes was installed"
expect_exit 0 sk -o json status
python3 -S - "$OUT" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
cur = [g for g in s["generations"] if g["current"]][0]
origin = cur["shims"][0]["origin"]
assert origin.startswith("Shim/demo@"), origin
PY

# A file in shims.d/ with the same name wins; the Shim is left out with a warning.
write_shim_toml "$ROOT/etc/shimkeeper/shims.d/10-demo.toml" demo demo "$SERVER_URL/demo.tar.gz" \
    "$(sha256_of "$T/www/demo.tar.gz")"
expect_exit 0 sk plan
expect_output_contains "the node's own file wins"
rm "$ROOT/etc/shimkeeper/shims.d/10-demo.toml"

annotation=$(kube_admin get node node-a -o jsonpath='{.metadata.annotations.shim\.containerd\.x-k8s\.io/demo}')
[[ $annotation == *'"state":"installing"'* && $annotation == *'"generation":1'* ]] ||
    fail "node-a's annotation after apply --no-restart: $annotation"
[[ -z "$(kube_admin get node node-a -o jsonpath='{.metadata.labels.shim\.containerd\.x-k8s\.io/demo}')" ]] ||
    fail "node-a is labelled although containerd never loaded demo"

# Another machine's Node: refused, nothing changes.
kube_admin patch node node-a --subresource=status --type=merge \
    -p '{"status":{"nodeInfo":{"machineID":"0123456789abcdef"}}}' >/dev/null
echo fedcba9876543210 >"$ROOT/etc/machine-id"
before="$(tree_digest "$ROOT/etc")$(tree_digest "$ROOT/var/lib/shimkeeper/store")"
expect_exit 2 sk apply --no-restart
expect_output_contains "belongs to machine 0123456789abcdef"
[[ "$(tree_digest "$ROOT/etc")$(tree_digest "$ROOT/var/lib/shimkeeper/store")" == "$before" ]] ||
    fail "a Node of another machine changed the node"
echo 0123456789abcdef >"$ROOT/etc/machine-id"
expect_exit 0 sk apply --no-restart

# No node_name: the API server says which Node the credential is confined to (here a kubelet's
# client certificate), not the hostname.
kube_create_node node-c wasm=true
cp "$ROOT/etc/shimkeeper/shimkeeper.toml" "$T/named.toml"
cat >"$ROOT/etc/shimkeeper/shimkeeper.toml" <<TOML
[kube]
kubeconfig = "$(kube_node_cert_kubeconfig node-c)"
TOML
[[ $(hostname) != node-c ]] || fail "this host is named node-c: the case proves nothing"
expect_exit 0 sk status
expect_output_contains "Cluster: node node-c (from the kubelet identity system:node:node-c ($KUBE_DIR/kubeconfig/node-c-cert))"
expect_output_contains "Shim/demo (generation 1): selects this node, nodeSelector wasm=true matches"
# The kubelet's credential reports on its own Node (NodeRestriction lets it, and nothing else).
expect_exit 0 sk apply --no-restart
annotation=$(kube_admin get node node-c -o jsonpath='{.metadata.annotations.shim\.containerd\.x-k8s\.io/demo}')
[[ $annotation == *'"generation":1'* ]] ||
    fail "node-c's annotation after an apply with the kubelet credential: $annotation"

# A node_name that is not the credential's Node, and a credential confined to no Node: refused
# before anything is read or changed.
before="$(tree_digest "$ROOT/etc/containerd")$(tree_digest "$ROOT/var/lib/shimkeeper/store")"
cat >"$ROOT/etc/shimkeeper/shimkeeper.toml" <<TOML
[kube]
kubeconfig = "$(kube_node_token_kubeconfig node-b)"
node_name = "node-a"
TOML
expect_exit 2 sk apply --no-restart
expect_output_contains "[kube] node_name is node-a but the credential of"
expect_output_contains "bound to Node node-b"
cat >"$ROOT/etc/shimkeeper/shimkeeper.toml" <<TOML
[kube]
kubeconfig = "$(kube_kubeconfig coordinator)"
TOML
expect_exit 2 sk apply --no-restart
expect_output_contains "is system:serviceaccount:shimkeeper-system:shimkeeper-coordinator, which is not confined to a Node"
[[ "$(tree_digest "$ROOT/etc/containerd")$(tree_digest "$ROOT/var/lib/shimkeeper/store")" == "$before" ]] ||
    fail "a credential that is not this node's changed the node"
cp "$T/named.toml" "$ROOT/etc/shimkeeper/shimkeeper.toml"

# The API server unreachable: the Shims last read stand in; the node stays as it is.
sed -E "s#server: https://[^,} ]+#server: https://127.0.0.1:1#" "$node_a_kubeconfig" >"$T/dead.kubeconfig"
sed -i "s#^kubeconfig = .*#kubeconfig = \"$T/dead.kubeconfig\"#" "$ROOT/etc/shimkeeper/shimkeeper.toml"
before="$(tree_digest "$ROOT/etc")$(tree_digest "$ROOT/var/lib/shimkeeper/bin")"
expect_exit 0 sk apply --no-restart
expect_output_contains "cluster: unreachable since"
expect_output_contains "Nothing to do"
expect_exit 0 sk status
expect_output_contains "unreachable since"
expect_output_contains "Shim/demo (generation 1): selects this node"
[[ "$(tree_digest "$ROOT/etc")$(tree_digest "$ROOT/var/lib/shimkeeper/bin")" == "$before" ]] ||
    fail "an unreachable API server changed the node"
# Never read before (the memory gone): an error, and nothing changes.
mv "$ROOT/var/lib/shimkeeper/state/cluster.json" "$T/cluster.json"
expect_exit 1 sk apply --no-restart
expect_output_contains "has not read the cluster before"
[[ "$(tree_digest "$ROOT/etc")$(tree_digest "$ROOT/var/lib/shimkeeper/bin")" == "$before" ]] ||
    fail "an unreachable API server changed a node that never read the cluster"
mv "$T/cluster.json" "$ROOT/var/lib/shimkeeper/state/cluster.json"
sed -i "s#^kubeconfig = .*#kubeconfig = \"$node_a_kubeconfig\"#" "$ROOT/etc/shimkeeper/shimkeeper.toml"

# The Shim deleted: uninstalled, the config back to its original bytes.
kube_admin delete shim demo >/dev/null
expect_exit 0 sk apply --no-restart
expect_output_contains "Committed generation 2"
cmp -s "$config" "$T/original.toml" || fail "deleting the Shim did not restore the config"
echo "ok: Shims selecting this node are its desired state, beside shims.d/"
