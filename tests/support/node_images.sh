# shellcheck shell=bash
# Container images for the test node without any registry: a busybox rootfs for
# `ctr run --rootfs`, and, built with Debian's umoci and skopeo, a pause image for CRI sandboxes
# and a workload image for a real kubelet's Pods (kube_node.sh). Sourced by node_harness.sh.

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

# node_build_busybox_archive ARCHIVE REF ENTRYPOINT...: builds, once, an image of the busybox
# rootfs named REF whose entrypoint is ENTRYPOINT, as a docker-archive at ARCHIVE; prints ARCHIVE.
node_build_busybox_archive() {
    local archive=$1 ref=$2 arg
    shift 2
    if [[ -s $archive ]]; then
        printf '%s\n' "$archive"
        return 0
    fi
    command -v umoci >/dev/null || node_skip "umoci is not installed"
    command -v skopeo >/dev/null || node_skip "skopeo is not installed"
    local work entrypoint=()
    for arg in "$@"; do
        entrypoint+=(--config.entrypoint "$arg")
    done
    mkdir -p "$(dirname "$archive")"
    work=$(mktemp -d "$(dirname "$archive")/image-build.XXXXXX")
    {
        umoci init --layout "$work/oci" &&
            umoci new --image "$work/oci:image" &&
            umoci unpack --image "$work/oci:image" "$work/bundle" &&
            node_busybox_rootfs "$work/bundle/rootfs" &&
            umoci repack --image "$work/oci:image" "$work/bundle" &&
            umoci config --image "$work/oci:image" "${entrypoint[@]}" &&
            skopeo --insecure-policy copy --quiet "oci:$work/oci:image" \
                "docker-archive:$work/image.tar:$ref" &&
            mv "$work/image.tar" "$archive"
    } >"$work/build.log" 2>&1 || {
        node_log "building image $ref failed; see $work/build.log"
        cat "$work/build.log" >&2
        return 1
    }
    rm -rf "$work"
    printf '%s\n' "$archive"
}

# PID 1 of a sandbox must exit on SIGTERM and otherwise sleep without wakeups.
k_node_pause_entrypoint=(/bin/sh -c "trap 'exit 0' TERM INT; sleep 2147483647 & wait")

# Builds the pause image's archive once into the cache; prints its path.
node_build_pause_archive() {
    node_build_busybox_archive "$(node_cache_dir)/shimkeeper-pause-1.oci.tar" \
        "${k_node_pause_image:?}" "${k_node_pause_entrypoint[@]}"
}

# node_import_archive ARCHIVE REF: imports ARCHIVE into the node's k8s.io namespace (where the
# kubelet's images live) and checks that it created REF.
node_import_archive() {
    local archive=$1 ref=$2
    if ! ctr -a "$NODE_SOCKET" -n k8s.io images import "$archive" >"$NODE_DIR/log/import.log" 2>&1; then
        node_log "ctr images import $archive failed: $(cat "$NODE_DIR/log/import.log")"
        return 1
    fi
    local images # captured first: `grep -q` closing the pipe early fails ctr under pipefail
    images=$(ctr -a "$NODE_SOCKET" -n k8s.io images ls -q)
    if ! grep -qx "$ref" <<<"$images"; then
        node_log "the import did not create $ref: $(cat "$NODE_DIR/log/import.log")"
        return 1
    fi
}

# The workload image: a container that sleeps and ends at once on SIGTERM. Cached outside the
# tree under a name keyed by its inputs (busybox, the entrypoint, the builder), so that a change
# of any of them builds a new one.
k_node_workload_entrypoint=(/bin/sh -c "echo workload up; trap 'exit 0' TERM INT; sleep 2147483647 & wait")

# node_workload_image: builds (once) and imports the workload image; prints its name.
node_workload_image() {
    local key ref archive
    [[ -x /bin/busybox ]] || node_skip "busybox-static is not installed"
    key=$({
        sha256sum /bin/busybox
        printf '%s\n' "${k_node_workload_entrypoint[@]}"
        declare -f node_build_busybox_archive node_busybox_rootfs
    } | sha256sum | cut -c1-12)
    ref=localhost/shimkeeper-workload:$key
    archive=${SHIMKEEPER_CACHE:-/var/cache/shimkeeper-test}/images/shimkeeper-workload-$key.tar
    node_build_busybox_archive "$archive" "$ref" "${k_node_workload_entrypoint[@]}" >/dev/null &&
        node_import_archive "$archive" "$ref" || return 1
    printf '%s\n' "$ref"
}

# node_pause_image: imports the locally built pause image into the node's k8s.io namespace
# under the name that containerd's sandbox_image names; prints that name.
node_pause_image() {
    local archive
    archive=$(node_build_pause_archive) || return 1
    node_import_archive "$archive" "$k_node_pause_image" || return 1
    printf '%s\n' "$k_node_pause_image"
}
