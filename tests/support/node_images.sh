# shellcheck shell=bash
# Container images for the test node without any registry: a busybox rootfs for
# `ctr run --rootfs`, and a pause image for CRI sandboxes built with Debian's umoci and skopeo.
# Sourced by node_harness.sh.

# node_cache_dir: where built artifacts are kept between tests (the build dir when known).
node_cache_dir() {
    local dir=${SHIMKEEPER_BUILD_DIR:-${NODE_DIR:?node_up first}}/node-cache
    mkdir -p "$dir"
    printf '%s\n' "$dir"
}

# node_busybox_rootfs DIR: a minimal root filesystem with busybox-static and its applets.
node_busybox_rootfs() {
    local rootfs=$1 applet
    [[ -x /bin/busybox ]] || node_skip "busybox-static is not installed"
    mkdir -p "$rootfs"/{bin,dev,proc,sys,tmp,etc,root}
    cp /bin/busybox "$rootfs/bin/busybox"
    for applet in sh echo cat sleep ls ps id hostname true false env readlink; do
        ln -sf busybox "$rootfs/bin/$applet"
    done
    printf 'root:x:0:0:root:/root:/bin/sh\n' >"$rootfs/etc/passwd"
    printf 'root:x:0:\n' >"$rootfs/etc/group"
}

# Builds the pause image's OCI archive once into the cache; prints its path.
node_build_pause_archive() {
    local archive
    archive=$(node_cache_dir)/shimkeeper-pause-1.oci.tar
    if [[ -s $archive ]]; then
        printf '%s\n' "$archive"
        return 0
    fi
    command -v umoci >/dev/null || node_skip "umoci is not installed"
    command -v skopeo >/dev/null || node_skip "skopeo is not installed"
    local work
    work=$(mktemp -d "$(node_cache_dir)/pause-build.XXXXXX")
    {
        umoci init --layout "$work/oci" &&
            umoci new --image "$work/oci:pause" &&
            umoci unpack --image "$work/oci:pause" "$work/bundle" &&
            node_busybox_rootfs "$work/bundle/rootfs" &&
            umoci repack --image "$work/oci:pause" "$work/bundle" &&
            # PID 1 of a sandbox must exit on SIGTERM and otherwise sleep without wakeups.
            umoci config --image "$work/oci:pause" \
                --config.entrypoint /bin/sh --config.entrypoint -c \
                --config.entrypoint "trap 'exit 0' TERM INT; sleep 2147483647 & wait" &&
            skopeo --insecure-policy copy --quiet "oci:$work/oci:pause" \
                "docker-archive:$work/pause.tar:${k_node_pause_image:?}" &&
            mv "$work/pause.tar" "$archive"
    } >"$work/build.log" 2>&1 || {
        node_log "building the pause image failed; see $work/build.log"
        cat "$work/build.log" >&2
        return 1
    }
    rm -rf "$work"
    printf '%s\n' "$archive"
}

# node_pause_image: imports the locally built pause image into the node's k8s.io namespace
# under the name that containerd's sandbox_image names; prints that name.
node_pause_image() {
    local archive
    archive=$(node_build_pause_archive) || return 1
    if ! ctr -a "$NODE_SOCKET" -n k8s.io images import "$archive" >"$NODE_DIR/log/import.log" 2>&1; then
        node_log "ctr images import $archive failed: $(cat "$NODE_DIR/log/import.log")"
        return 1
    fi
    local images # captured first: `grep -q` closing the pipe early fails ctr under pipefail
    images=$(ctr -a "$NODE_SOCKET" -n k8s.io images ls -q)
    if ! grep -qx "$k_node_pause_image" <<<"$images"; then
        node_log "the import did not create $k_node_pause_image: $(cat "$NODE_DIR/log/import.log")"
        return 1
    fi
    printf '%s\n' "$k_node_pause_image"
}
