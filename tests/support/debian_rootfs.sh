# shellcheck shell=bash
# A Debian 12 root filesystem for the distro tests, made once with mmdebstrap and cached under
# /var/cache/shimkeeper-test/debian-rootfs-<hash> (SHIMKEEPER_CACHE moves the folder). The hash
# covers everything that decides its content: the suite, the mirror, the package list and this
# file. Each test works on its own copy (debian_rootfs_copy), never on the cache.
#
#   source tests/support/debian_rootfs.sh
#   debian_rootfs_copy "$T/rootfs"    # builds the cache first when it is missing (minutes)
#   debian_rootfs_copy "$T/rootfs" linux-image-amd64   # a variant with more packages, cached apart
#
# Each variant is a cold-cache cost of minutes (download, unpack, configure), so the base carries
# what most tests need and only the kernel is a variant. The .debs downloaded are kept in
# <cache>/debian-archives and handed to the next mmdebstrap, so a variant or a rebuild after this
# file changed downloads only what is new.

k_debian_rootfs_suite=bookworm
# systemd as PID 1 with a system bus, Debian's containerd and runc, what the tests use inside, and
# the libraries the shimkeeper .deb depends on (so `apt-get install ./shimkeeper_*.deb` needs no
# network: its dependencies are already satisfied).
# Also, for the tests that need them: python3 and python3-apt (Ansible's target side and its apt
# module), prometheus-node-exporter (metrics read inside a booted node), cloud-init (disabled by
# /etc/cloud/cloud-init.disabled; the cloud-init test deletes that file in its copy).
k_debian_rootfs_packages=systemd,systemd-sysv,dbus,libpam-systemd,containerd,runc,iproute2,ca-certificates,procps,busybox-static,libarchive13,libisal2,libcurl4,libprotobuf-lite32,libssl3,libtomlplusplus3,libyaml-cpp0.7,libcpp-httplib0.11,python3,python3-apt,prometheus-node-exporter,cloud-init

# debian_mirror: the first Debian archive this machine's apt sources name (deb822 or one-line).
debian_mirror() {
    local uri
    uri=$(sed -nE 's/^URIs:[[:space:]]*([^[:space:]]+).*/\1/p' /etc/apt/sources.list.d/*.sources \
        2>/dev/null | grep -v -- '-security' | head -n1 || true)
    if [[ -z $uri && -f /etc/apt/sources.list ]]; then
        uri=$(awk '$1 == "deb" && $2 !~ /^\[/ && $2 !~ /security/ { print $2; exit }
                   $1 == "deb" && $2 ~ /^\[/ && $3 !~ /security/ { print $3; exit }' \
            /etc/apt/sources.list)
    fi
    [[ -n $uri ]] || {
        echo "no Debian mirror found in /etc/apt/sources.list{,.d/*.sources}" >&2
        return 1
    }
    echo "$uri"
}

# debian_rootfs_cache [EXTRA]: prints the cached rootfs folder, making it when it is missing.
# EXTRA: more packages, comma-separated; each distinct list is a rootfs of its own.
debian_rootfs_cache() {
    local mirror hash cache dir staging packages=$k_debian_rootfs_packages${1:+,$1}
    command -v mmdebstrap >/dev/null || {
        echo "mmdebstrap is not installed (scripts/install-deps)" >&2
        return 77
    }
    mirror=$(debian_mirror) || return 1
    hash=$({
        echo "$k_debian_rootfs_suite $mirror $packages"
        cat "${BASH_SOURCE[0]}"
    } | sha256sum | cut -c1-12)
    cache=${SHIMKEEPER_CACHE:-/var/cache/shimkeeper-test}
    dir=$cache/debian-rootfs-$hash
    if [[ ! -d $dir ]]; then
        mkdir -p "$cache/debian-archives"
        staging=$(mktemp -d "$cache/.debian-rootfs-$hash.XXXXXX")
        echo "making the Debian rootfs $dir (mmdebstrap from $mirror)" >&2
        # essential/unlink skipped: the essential packages' .debs stay for sync-out too.
        if ! mmdebstrap --mode=root --variant=minbase --include="$packages" \
            --skip=essential/unlink \
            --setup-hook='mkdir -p "$1/var/cache/apt/archives"' \
            --setup-hook="sync-in $cache/debian-archives /var/cache/apt/archives/" \
            --customize-hook="sync-out /var/cache/apt/archives $cache/debian-archives" \
            --customize-hook='touch "$1/etc/cloud/cloud-init.disabled"' \
            "$k_debian_rootfs_suite" "$staging/rootfs" "$mirror" >"$staging.log" 2>&1; then
            echo "mmdebstrap failed; see $staging.log" >&2
            rm -rf "$staging"
            return 1
        fi
        # Renamed into place whole: an interrupted build never looks like a cache. Two tests
        # that built it at once: the first rename wins (-T refuses a non-empty target).
        mv "$staging/rootfs" "$staging/done"
        mv -T "$staging" "$dir" 2>/dev/null || rm -rf "$staging"
        rm -f "$staging.log"
    fi
    echo "$dir/done"
}

# debian_rootfs_copy DEST [EXTRA]: a private copy of the cached rootfs (with EXTRA) at DEST.
debian_rootfs_copy() {
    local cached status=0
    cached=$(debian_rootfs_cache "${2:-}") || status=$?
    ((status == 0)) || return "$status"
    rm -rf "$1"
    cp -a "$cached" "$1"
}
