# The prologue of the OCI scenarios (tests/integration/oci_*.sh): the helpers of common.sh and
# registry.sh, the test folder (sk_init), a plain registry on a storage folder under $T, a node
# root whose containerd registry host folder sends the registry's host to plain http, and
# helpers to write a shim that fetches from it.
#
#   source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/oci_scenario.sh"
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest, or export it}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/registry.sh"

BIN="containerd-shim-demo-v2"
SHIM_SOURCE=/usr/bin/containerd-shim-runc-v2
STORE=""

node_arch() {
    case "$(uname -m)" in
        x86_64) echo amd64 ;;
        aarch64) echo arm64 ;;
        *) uname -m ;;
    esac
}

# The other architecture a multi-platform index holds.
other_arch() {
    if [[ "$(node_arch)" == arm64 ]]; then echo amd64; else echo arm64; fi
}

oci_init() {
    reg_require
    STORE="$ROOT/var/lib/shimkeeper"
    DATA="$T/registry-data"
    reg_start "$DATA"
    oci_hosts_toml "$REG" "server = \"http://$REG\""
    oci_empty_store
}

# oci_empty_store: a node whose store exists but holds nothing (as after any earlier command),
# so that a failed fetch must leave it exactly as it was, down to the layout.
oci_empty_store() {
    rm -rf "$STORE"
    mkdir -p "$STORE/store/sha256" "$STORE/bin" "$STORE/tmp" "$STORE/state"
    install -m 0600 /dev/null "$STORE/state/lock"
}

# oci_hosts_toml HOST TEXT: containerd's registry host configuration for HOST on the node.
oci_hosts_toml() {
    mkdir -p "$ROOT/etc/containerd/certs.d/$1"
    printf '%s\n' "$2" >"$ROOT/etc/containerd/certs.d/$1/hosts.toml"
}

# oci_shim REFERENCE [PATH] [EXTRA]: the only shim of the node fetches from REFERENCE.
oci_shim() {
    rm -f "$ROOT"/etc/shimkeeper/shims.d/*.toml
    {
        echo '[[shim]]'
        echo 'name = "demo"'
        echo 'handler = "demo"'
        echo 'runtime_type = "io.containerd.demo.v2"'
        [[ -z "${3:-}" ]] || echo "$3"
        echo '[shim.fetch]'
        echo "oci = \"$1\""
        [[ -z "${2:-}" ]] || echo "path = \"$2\""
    } >"$ROOT/etc/shimkeeper/shims.d/demo.toml"
}

# oci_agent_settings TEXT: the agent config (fast failures: no retries).
oci_agent_settings() {
    printf '[fetch]\nretries = 0\nconnect_timeout = 2\n%s\n' "${1:-}" \
        >"$ROOT/etc/shimkeeper/shimkeeper.toml"
}

# expect_fetch_refused CODE TEXT...: a fetch exits with CODE (1 failed, 2 bad input) with every
# TEXT in its message, and leaves the store (tmp/ included) and bin/ as they were.
expect_fetch_refused() {
    local code="$1" before
    shift
    before="$(tree_digest "$STORE")"
    expect_exit "$code" sk fetch
    local text
    for text in "$@"; do
        expect_output_contains "$text"
    done
    [[ "$(tree_digest "$STORE")" == "$before" ]] || fail "a failed fetch changed the store"
    [[ -z "$(ls -A "$STORE/tmp" 2>/dev/null)" ]] || fail "a failed fetch left $(ls -A "$STORE/tmp")"
}

put_shim() { # rootfs: the shim binary in usr/bin
    mkdir -p "$1/usr/bin"
    cp "$SHIM_SOURCE" "$1/usr/bin/$BIN"
}

sk_init
oci_init
