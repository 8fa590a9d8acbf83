# shellcheck shell=bash
# What the distro tests (tests/distro/*.sh) share: root or skip, a temp folder $T kept when the
# test fails (common.sh), and readers of the packages' file lists.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"

distro_init() {
    (($(id -u) == 0)) || skip "the distro tests need root"
    sk_init
}

# distro_packages: prints the .deb and the .rpm in build/packages/ (made by tests/distro/packages.sh
# or scripts/package), skipping the test when they are missing.
distro_packages() {
    local dir=$SHIMKEEPER_SOURCE_DIR/build/packages
    compgen -G "$dir/shimkeeper_*.deb" >/dev/null && compgen -G "$dir/shimkeeper-*.rpm" >/dev/null ||
        skip "no packages in $dir: run scripts/package (or the distro.packages test) first"
    ls "$dir"/shimkeeper_*.deb "$dir"/shimkeeper-*.rpm
}

# distro_leaf_paths: reads "<type> <path>" lines (type d for folders) and prints, sorted, every
# path that is not a folder, and every folder nothing else in the list lies under (shipped
# empty), the latter with a trailing slash.
distro_leaf_paths() {
    awk '{ type[$2] = $1; paths[NR] = $2 }
        END {
            for (i in paths) { p = paths[i]; sub(/\/$/, "", p); n = split(p, parts, "/")
                prefix = ""; for (j = 2; j < n; j++) { prefix = prefix "/" parts[j]; parent[prefix] = 1 } }
            for (i in paths) { p = paths[i]; q = p; sub(/\/$/, "", q)
                if (type[p] != "d") print q
                else if (!(q in parent) && q != "") print q "/" }
        }' | LC_ALL=C sort -u
}

# distro_readme_files deb|rpm: the file list README.md gives for that package: the lines of the
# fenced block after the marker "<!-- package-files:FORMAT -->".
distro_readme_files() {
    awk -v marker="<!-- package-files:$1 -->" '
        $0 == marker { found = 1; next }
        found && /^```/ { if (inside) exit; inside = 1; next }
        inside { print }' "$SHIMKEEPER_SOURCE_DIR/README.md" | LC_ALL=C sort -u
}

# distro_serve_shims ROOT NAME...: for each NAME, ROOT's own containerd-shim-runc-v2 renamed
# containerd-shim-NAME-v2 (so it really runs containers) and packed as $T/artifacts/NAME.tar.gz;
# then serves $T/artifacts on the host's 127.0.0.1 (SERVER_URL; a chroot and an nspawn node both
# share the host's network).
distro_serve_shims() {
    local root=$1 name
    shift
    mkdir -p "$T/artifacts" "$T/shim"
    for name in "$@"; do
        install -m 0755 "$root/usr/bin/containerd-shim-runc-v2" "$T/shim/containerd-shim-$name-v2"
        sk_pack_tar_gz "$T/shim" "$T/artifacts/$name.tar.gz" "containerd-shim-$name-v2"
    done
    sk_start_server "$T/artifacts"
}

# distro_busybox_box ROOT: a busybox rootfs at ROOT/srv/box for `ctr run --rootfs /srv/box`.
distro_busybox_box() {
    mkdir -p "$1/srv/box/bin"
    cp "$1/bin/busybox" "$1/srv/box/bin/busybox"
    ln -s busybox "$1/srv/box/bin/sh"
    ln -s busybox "$1/srv/box/bin/echo"
}

# distro_run_through_shim SHIM NAME: a container NAME on the box above, run by the booted node's
# ctr through the runtime SHIM (a path inside the node), writes "hello from NAME" into its root;
# prints that, or ctr's words when the run fails. Read from the file, not from ctr's stdout: ctr
# can lose the output of a process that exits at once (a whole run saw it empty, ctr exiting 0).
distro_run_through_shim() {
    local shim=$1 name=$2 said
    said=$(boot_run ctr run --rm --runtime "$shim" --rootfs /srv/box "$name" \
        /bin/sh -c "echo hello from $name >/hello-$name" 2>&1) || {
        echo "$said"
        return 1
    }
    boot_run cat "/srv/box/hello-$name" && boot_run rm -f "/srv/box/hello-$name"
}

# distro_count_containerd_starts ROOT [-]: every start of the node's containerd.service leaves a
# line in /run/containerd-starts, so restarts are counted, not guessed. With "-", lines read
# from stdin go into the same drop-in's [Service] section too.
distro_count_containerd_starts() {
    mkdir -p "$1/etc/systemd/system/containerd.service.d"
    {
        echo "[Service]"
        echo "ExecStartPre=/bin/sh -c 'date +%%s.%%N >>/run/containerd-starts'"
        [[ ${2:-} != - ]] || cat
    } >"$1/etc/systemd/system/containerd.service.d/50-count-starts.conf"
}
