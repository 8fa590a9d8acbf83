#!/usr/bin/env bash
# An air-gapped node: containerd's hosts.toml for the upstream registry names a mirror, and
# the upstream itself is unreachable. The shim comes from the mirror, as the node's images do.
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest, or export it}/tests/support/oci_scenario.sh"
oci_agent_settings
WANT="$(sha256_of "$SHIM_SOURCE")"
make_image "$T/layout" v1 "$(node_arch)" put_shim
IMAGE="$(push_image "$T/layout" v1 shims/demo:v1)"

# The upstream name resolves nowhere reachable: a port nothing listens on.
UPSTREAM="127.0.0.1:$(sk_free_port)"
oci_hosts_toml "$UPSTREAM" "server = \"http://$UPSTREAM\"

[host.\"http://$REG\"]
  capabilities = [\"pull\", \"resolve\"]"
oci_shim "$UPSTREAM/shims/demo:v1@$IMAGE" "usr/bin/$BIN"
pushed="$(reg_requests)" # skopeo's own requests
expect_exit 0 sk fetch
cmp -s "$STORE/store/sha256/$WANT/$BIN" "$SHIM_SOURCE" || fail "the stored binary differs"
(($(reg_requests) - pushed == 2)) ||
    fail "the mirror should have served 2 requests, it saw $(($(reg_requests) - pushed))"

# containerd's own config names another registry host folder: that one is used.
oci_empty_store
mkdir -p "$ROOT/etc/containerd/registry-hosts"
mv "$ROOT/etc/containerd/certs.d/$UPSTREAM" "$ROOT/etc/containerd/registry-hosts/"
printf 'version = 2\n[plugins."io.containerd.grpc.v1.cri".registry]\n  config_path = "/etc/containerd/registry-hosts"\n' \
    >"$ROOT/etc/containerd/config.toml"
expect_exit 0 sk fetch
cmp -s "$STORE/store/sha256/$WANT/$BIN" "$SHIM_SOURCE" || fail "the stored binary differs"

# Without the mirror the same reference cannot be fetched: the mirror really was used.
oci_empty_store
rm -rf "$ROOT/etc/containerd/registry-hosts" "$ROOT/etc/containerd/config.toml"
oci_hosts_toml "$UPSTREAM" "server = \"http://$UPSTREAM\""
expect_exit 1 sk fetch
expect_output_contains "$UPSTREAM"
