# shellcheck shell=bash
# Helpers for the real-node transaction scenarios (tests/node/txn_*.sh) and the demo: a node from
# node_harness.sh plus an artifact server from common.sh, and shimkeeper driving them.
#
#   source common.sh; source node_harness.sh; node_reexec_in_namespace "$@"; sk_init
#   node_up "$T/node"; node_shim_serve
#   node_shim_declare demo v1        # shims.d/10-demo.toml -> artifact "demo-v1.tar.gz"
#   ski apply                        # shimkeeper -c $NODE_AGENT_CONFIG apply

# ski ARGS...: shimkeeper against the harness node (no --root: real host paths, see the harness).
ski() {
    "$SHIMKEEPER" -c "$NODE_AGENT_CONFIG" "$@"
}

# node_shim_serve: starts the artifact server on $T/artifacts.
node_shim_serve() {
    mkdir -p "$T/artifacts"
    sk_start_server "$T/artifacts"
}

# node_shim_artifact NAME VARIANT: a tar.gz of containerd-shim-runc-v2 renamed to NAME's binary.
# Different VARIANTs give different digests (an extra file), the same working shim.
node_shim_artifact() {
    local name=$1 variant=$2 staging
    staging=$(mktemp -d "$T/artifact.XXXXXX")
    install -m 0755 /usr/bin/containerd-shim-runc-v2 "$staging/$(shim_binary_for "$name")"
    echo "$name $variant" >"$staging/VERSION"
    tar -C "$staging" -czf "$T/artifacts/$name-$variant.tar.gz" .
    rm -rf "$staging"
}

# node_shim_declare NAME VARIANT [HANDLER]: builds the artifact and (re)writes the drop-in.
node_shim_declare() {
    local name=$1 variant=$2 handler=${3:-$1}
    node_shim_artifact "$name" "$variant"
    local file="$NODE_SHIMS_D/10-$name.toml"
    rm -f "$file"
    write_shim_toml "$file" "$name" "$handler" "$SERVER_URL/$name-$variant.tar.gz" \
        "$(sha256_of "$T/artifacts/$name-$variant.tar.gz")"
}

# node_shim_digest NAME VARIANT: the sha256 of a built artifact.
node_shim_digest() {
    sha256_of "$T/artifacts/$1-$2.tar.gz"
}

# node_handler_binary HANDLER: where CRI says the handler's shim is ("" when not registered).
node_handler_binary() {
    node_cri_client status | awk -F'\t' -v h="$1" '$1 == "handler" && $2 == h { print ($3 ~ /^\// ? $3 : $4) }'
}

# node_config_mtime: containerd config's modification time (ns), to prove "no write".
node_config_mtime() {
    stat -c %Y.%y "$NODE_CONFIG"
}
