# shellcheck shell=bash
# The test node's files: containerd's config and unit, and shimkeeper's agent config.
# Sourced by node_harness.sh.

# node_write_containerd_config DIR: the line's own `containerd config default` (version 2 on 1.x,
# 3 or 4 on 2.x) with every host path it names moved into DIR, so that instances never share a
# socket, a root or a state folder with each other or with the machine. Values are rewritten by
# what they are, not by which table holds them: 2.x moves keys between tables (the CRI plugin splits
# into io.containerd.cri.v1.runtime/images; version 4 moves the gRPC address into
# plugins."io.containerd.server.v1.grpc") and quotes with ' where 1.x quotes with ".
# 2.x's default imports /etc/containerd/conf.d/*.toml: that becomes DIR/etc/containerd/conf.d.
node_write_containerd_config() {
    local dir=$1 q="([\"'])"
    mkdir -p "$dir/etc/containerd/conf.d" "$dir/opt/cni/bin" "$dir/etc/cni/net.d" \
        "$dir/opt/containerd" "$dir/run/nri"
    "$NODE_CONTAINERD" config default | sed -E \
        -e "s#^root = $q.*#root = \\1$dir/var/lib/containerd\\1#" \
        -e "s#^state = $q.*#state = \\1$dir/run/containerd\\1#" \
        -e "s#${q}/run/containerd/containerd\\.sock(\\.ttrpc)?\\1#\\1$dir/containerd/containerd.sock\\2\\1#g" \
        -e "s#${q}/run/containerd/debug\\.sock\\1#\\1$dir/containerd/debug.sock\\1#g" \
        -e "s#^( *restrict_oom_score_adj = )false#\\1true#" \
        -e "s#^( *(sandbox_image|sandbox) = )$q.*#\\1\\3$NODE_PAUSE_IMAGE\\3#" \
        -e "s#${q}(/opt/containerd|/opt/cni/bin|/etc/cni/net\\.d|/etc/containerd/conf\\.d/)#\\1$dir\\2#g" \
        -e "s#${q}/var/run/nri/#\\1$dir/run/nri/#g" \
        -e "s#${q}(/opt/nri/|/etc/nri/)#\\1$dir\\2#g" \
        >"$dir/etc/containerd/config.toml"
}

# node_unit_path_line: for a built line, the unit's PATH puts that line's folder first, so that
# containerd finds its own containerd-shim-runc-v2 (it looks on PATH before its own folder), the
# way /usr/local/bin comes before /usr/bin on a node with upstream's release installed.
node_unit_path_line() {
    [[ $NODE_CONTAINERD_BIN == /usr/bin ]] ||
        echo "Environment=PATH=$NODE_CONTAINERD_BIN:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
}

# The unit mirrors containerd's upstream containerd.service (restart and start-limit settings
# included, so that restart-storm behaviour is tested against what nodes really run).
node_write_containerd_unit() {
    local unit_dir=$XDG_CONFIG_HOME/systemd/user
    mkdir -p "$unit_dir"
    cat >"$unit_dir/$NODE_UNIT" <<EOF
[Unit]
Description=containerd of the shimkeeper test node $NODE_DIR
StartLimitBurst=16
StartLimitIntervalSec=60s

[Service]
Type=notify
ExecStart=$NODE_CONTAINERD --config $NODE_CONFIG
$(node_unit_path_line)
KillMode=process
Delegate=yes
Restart=always
RestartSec=5
LimitNPROC=infinity
LimitCORE=infinity
LimitNOFILE=infinity
TasksMax=infinity
EOF
}

node_write_agent_config() {
    mkdir -p "$NODE_DIR/etc/shimkeeper/shims.d" "$NODE_STORE_DIR"
    cat >"$NODE_AGENT_CONFIG" <<EOF
# Written by tests/support/node_harness.sh: absolute host paths, use without --root.
[containerd]
config_path = "$NODE_CONFIG"
unit = "$NODE_UNIT"
socket = "$NODE_SOCKET"
binary = "$NODE_CONTAINERD"

[systemd]
bus = "user"

[store]
dir = "$NODE_STORE_DIR"
EOF
}
