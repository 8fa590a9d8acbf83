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

# node_shim_artifact NAME VARIANT: a tar.gz of the line's containerd-shim-runc-v2 renamed to NAME's
# binary.
# Different VARIANTs give different digests (an extra file), the same working shim.
node_shim_artifact() {
    local name=$1 variant=$2 staging
    staging=$(mktemp -d "$T/artifact.XXXXXX")
    install -m 0755 "$NODE_SHIM_RUNC" "$staging/$(shim_binary_for "$name")"
    echo "$name $variant" >"$staging/VERSION"
    sk_pack_tar_gz "$staging" "$T/artifacts/$name-$variant.tar.gz" .
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

# --- Helpers for the transaction scenarios 2-8 (tests/node/txn_*.sh) ---

# node_count_starts: from now on every start of containerd.service appends a line to
# $NODE_DIR/starts.log (a unit drop-in with an ExecStartPre), so that a test counts restarts
# exactly rather than inferring them. Prints nothing; see node_starts.
node_count_starts() {
    : >"$NODE_DIR/starts.log"
    node_unit_dropin 50-count-starts "[Service]
ExecStartPre=/bin/sh -c 'date +%%s.%%N >>$NODE_DIR/starts.log'"
}

# node_starts: how many times containerd.service started since node_count_starts.
node_starts() {
    wc -l <"$NODE_DIR/starts.log"
}

# node_unit_identity: the unit's InvocationID and ActiveEnterTimestamp on one line; it changes
# with every start of containerd.service.
node_unit_identity() {
    printf '%s %s\n' "$(node_unit_prop InvocationID)" "$(node_unit_prop ActiveEnterTimestamp)"
}

# node_journal_field FIELD: one field of shimkeeper's journal (<store>/state/journal.json) as
# JSON text (strings unquoted); "<none>" when there is no journal.
node_journal_field() {
    local file=$NODE_STORE_DIR/state/journal.json
    if [[ ! -e $file ]]; then
        echo "<none>"
        return 0
    fi
    python3 -S -c 'import json, sys
value = json.load(open(sys.argv[1]))[sys.argv[2]]
print(value if isinstance(value, str) else json.dumps(value))' "$file" "$1"
}

# node_files_fingerprint: path, type, size, mtime and content hash of containerd's config folder
# and everything under shimkeeper's store; equal before and after = nothing was written.
node_files_fingerprint() {
    local path type size mtime sum
    while IFS=$'\t' read -r -d '' path type size mtime; do
        sum=-
        [[ $type == f ]] && sum=$(sha256_of "$path")
        printf '%s %s %s %s %s\n' "$path" "$type" "$size" "$mtime" "$sum"
    # state/lock is left out: every run that may change the node takes the node lock and writes
    # its pid there while it holds it (empty again afterwards), a no-op apply included.
    done < <(find "$(dirname "$NODE_CONFIG")" "$NODE_STORE_DIR" -path "$NODE_STORE_DIR/state/lock" \
        -prune -o -printf '%p\t%y\t%s\t%T@\0' | LC_ALL=C sort -z)
}

# node_config_digest: the content of containerd's config folder (the root config and the conf.d/
# drop-ins a 2.x config imports): equal before and after = not a config byte changed.
node_config_digest() {
    tree_digest "$NODE_CONFIG_DIR"
}

# node_config_mentions TEXT: some file of containerd's config folder holds TEXT (a fixed string).
node_config_mentions() {
    grep -rqF -- "$1" "$NODE_CONFIG_DIR"
}

# node_freeze_config DIR: copies containerd's config folder to DIR, pointing the copy's imports at
# the copy, and prints the copy's root config: containerd started on it keeps today's handlers
# whatever shimkeeper writes later (in place or as a drop-in).
node_freeze_config() {
    local dir=$1
    rm -rf "$dir"
    cp -a "$NODE_CONFIG_DIR" "$dir"
    sed -i "s#$NODE_CONFIG_DIR/#$dir/#g" "$dir/config.toml"
    echo "$dir/config.toml"
}

# node_config_parses: containerd itself loads the config file (the fatal class of errors).
node_config_parses() {
    "$NODE_CONTAINERD" --config "$NODE_CONFIG" config dump >/dev/null
}

# node_config_has_handler HANDLER: the config file holds a runtimes.HANDLER table.
node_config_has_handler() {
    node_config_dump_handlers | grep -qxF -- "$1"
}

# node_config_dump_handlers: the runtime handlers containerd reads from the config (its imports
# merged in), one per line. The CRI table is io.containerd.grpc.v1.cri in config version 2 and
# io.containerd.cri.v1.runtime from version 3; 2.x's dump quotes keys with ' instead of ".
node_config_dump_handlers() {
    local q="[\"']" table
    table="plugins\\.${q}io\\.containerd\\.(grpc\\.v1\\.cri|cri\\.v1\\.runtime)${q}\\.containerd\\.runtimes"
    "$NODE_CONTAINERD" --config "$NODE_CONFIG" config dump |
        sed -nE "s/^ *\\[$table\\.([^].]*)\\]\$/\\2/p" | sed -E "s/^$q(.*)$q\$/\\1/"
}

# node_handler_presence NAME [HANDLER]: "present" when the bin link, the config block and CRI
# Status all have shim NAME's handler, "absent" when none of them has it, otherwise "mixed: ..."
# naming which of the three have it. Fails (prints nothing) when CRI Status does not answer.
node_handler_presence() {
    local name=$1 handler=${2:-$1} link handlers have=()
    handlers=$(node_cri_handlers) || return 1
    link=$NODE_STORE_DIR/bin/$(shim_binary_for "$name")
    [[ -L $link ]] && have+=(link)
    node_config_has_handler "$handler" && have+=(config)
    grep -qxF -- "$handler" <<<"$handlers" && have+=(cri)
    case ${#have[@]} in
    0) echo absent ;;
    3) echo present ;;
    *) echo "mixed: ${have[*]}" ;;
    esac
}

# node_wait_healthy: containerd answers Version and CRI Status with RuntimeReady.
node_wait_healthy() {
    node_cri_client wait-healthy --timeout 30000 >/dev/null
}

# node_cri_handlers: the handler names CRI Status lists, one per line; fails when CRI does not
# answer.
node_cri_handlers() {
    local status
    status=$(node_cri_client status) || return 1
    awk -F'\t' '$1 == "handler" { print $2 }' <<<"$status"
}

# node_cri_has_handler HANDLER: CRI Status answers and lists HANDLER (whatever it points at).
node_cri_has_handler() {
    local handlers
    handlers=$(node_cri_handlers) || return 2
    grep -qxF -- "$1" <<<"$handlers"
}

# node_cri_lacks_handler HANDLER: CRI Status answers and does not list HANDLER.
node_cri_lacks_handler() {
    local handlers
    handlers=$(node_cri_handlers) || return 2
    ! grep -qxF -- "$1" <<<"$handlers"
}

# node_health_timeout SECONDS: shimkeeper's [health] timeout on this node (default 30 s), so that a
# scenario whose health check must fail does not wait the full default.
node_health_timeout() {
    printf '\n[health]\ntimeout = %s\n' "$1" >>"$NODE_AGENT_CONFIG"
}

# node_agent_start_in_cluster KUBECONFIG [RUN-ARGS...]: adds [kube] with KUBECONFIG (no node_name:
# the credential names the Node) to the agent's config and starts the agent as the Type=notify
# unit shimkeeper-agent.service (watchdog 60 s), logging to $NODE_DIR/log/agent.log, with
# `--log-level debug run RUN-ARGS...`. Its status file is $NODE_DIR/run/status.json unless
# RUN-ARGS name one: the sandbox shares the host's /run, and with it the default one.
node_agent_start_in_cluster() {
    local kubeconfig=$1
    shift
    printf '\n[kube]\nkubeconfig = "%s"\n' "$kubeconfig" >>"$NODE_AGENT_CONFIG"
    [[ " $* " == *" --status-file "* ]] || set -- --status-file "$NODE_DIR/run/status.json" "$@"
    node_agent_unit shimkeeper-agent.service 60 120 "$NODE_DIR/log/agent.log" --log-level debug run "$@"
    systemctl --user start shimkeeper-agent.service ||
        fail "the agent did not start: $(tail -n 30 "$NODE_DIR/log/agent.log")"
}
