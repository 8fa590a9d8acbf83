# shellcheck shell=bash
# The test node's files: containerd's config and unit, and shimkeeper's agent config.
# Sourced by node_harness.sh.

# node_write_containerd_config DIR: Debian's default config with every path moved into DIR.
node_write_containerd_config() {
    local dir=$1
    mkdir -p "$dir/etc/containerd" "$dir/opt/cni/bin" "$dir/etc/cni/net.d" "$dir/opt/containerd"
    containerd config default | awk -v dir="$dir" -v pause="$NODE_PAUSE_IMAGE" '
        /^\[/ { section = $0 }
        /^root = /  { print "root = \"" dir "/var/lib/containerd\""; next }
        /^state = / { print "state = \"" dir "/run/containerd\""; next }
        section == "[grpc]"  && /^  address = / {
            print "  address = \"" dir "/containerd/containerd.sock\""; next }
        section == "[ttrpc]" && /^  address = / {
            print "  address = \"" dir "/containerd/containerd.sock.ttrpc\""; next }
        section == "[debug]" && /^  address = / {
            print "  address = \"" dir "/containerd/debug.sock\""; next }
        /^ *restrict_oom_score_adj = / { sub(/false/, "true"); print; next }
        /^ *sandbox_image = / { sub(/".*"/, "\"" pause "\""); print; next }
        { gsub("\"/opt/containerd\"", "\"" dir "/opt/containerd\"")
          gsub("\"/opt/cni/bin\"", "\"" dir "/opt/cni/bin\"")
          gsub("\"/etc/cni/net.d\"", "\"" dir "/etc/cni/net.d\"")
          print }' >"$dir/etc/containerd/config.toml"
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
ExecStart=/usr/bin/containerd --config $NODE_CONFIG
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
binary = "/usr/bin/containerd"

[systemd]
bus = "user"

[store]
dir = "$NODE_STORE_DIR"
EOF
}
