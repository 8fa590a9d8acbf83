#!/usr/bin/env bash
# Test 5 of the distro label: the Ansible role of image-builder/ansible/, run by the real
# ansible-playbook (Debian's ansible) with the shimkeeper .deb, the way image-builder runs it:
#   1. an image root that is not running, over community.general.chroot, given the variables as
#      image-builder's ansible_user_vars passes them (README "Node images"): the package installed,
#      the shim's drop-in written, the shim baked into the store and containerd's config pointing
#      at it, the unit enabled; a second run changes nothing and downloads nothing; [kube] from
#      role variables is written and shimkeeper still loads it; a shim with a wrong sha256 fails
#      the play with shimkeeper's own message and leaves containerd's config as it was;
#   2. that image, copied as onto its disk (every inode new) and booted: the daemon finds it
#      converged, with no download and no containerd restart, the handler in CRI;
#   3. a booted node over community.docker.nsenter: the role converges the running node for
#      real (daemon active, containerd restarted through the system bus, the handler registered
#      in CRI); a second run changes nothing and restarts nothing; a shim taken out of the list
#      loses its drop-in (a hand-written one stays) and leaves containerd's config.
# seconds-about: 75
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/distro.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/debian_rootfs.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/booted_node.sh"
distro_init
command -v ansible-playbook >/dev/null || skip "ansible-playbook is missing (apt-get install ansible)"
deb=$(distro_packages | grep '\.deb$')
ib=$SHIMKEEPER_SOURCE_DIR/image-builder/ansible
shim_link=/var/lib/shimkeeper/bin/containerd-shim-demo-v2

# new_root DIR: a Debian 12 rootfs with what Ansible needs in it (python3; python3-apt for
# ansible.builtin.apt), and a line left by every start of containerd.service.
new_root() {
    local status=0
    debian_rootfs_copy "$1" || status=$?
    ((status == 0)) || { ((status == 77)) && skip "no Debian rootfs"; fail "no Debian rootfs"; }
    distro_count_containerd_starts "$1"
}

# play NAME ANSIBLE_ARGS...: the role's playbook; its output in $T/NAME.log (-v: with every
# task's result), the PLAY RECAP line in $RECAP. Fails the test when the play fails.
play() {
    local name=$1
    shift
    play_may_fail "$name" "$@" ||
        fail "the play '$name' failed: $(grep -E 'fatal:|FAILED|ERROR' -A3 "$T/$name.log" | head -30)"
}
play_may_fail() {
    local name=$1 rc=0
    shift
    # The chroot connection hands this environment to commands in the image, where a TMPDIR
    # of the host (the test's own temp folder, say) does not exist: dpkg-deb would fail on it.
    env -u TMPDIR ANSIBLE_ROLES_PATH="$ib/roles" ANSIBLE_NOCOLOR=1 ANSIBLE_LOCAL_TEMP="$T/ansible-local" \
        ansible-playbook -v "$@" "$ib/playbook.yml" >"$T/$name.log" 2>&1 || rc=$?
    RECAP=$(grep -A1 '^PLAY RECAP' "$T/$name.log" | tail -n1)
    return "$rc"
}
expect_install_command() { # NAME ARGS...: how play NAME ran shimkeeper (the role's choice)
    local name=$1 want
    shift
    want=$(printf '"%s", ' shimkeeper -o json "$@")
    grep -qF "\"cmd\": [${want%, }]" "$T/$name.log" ||
        fail "the play '$name' did not run 'shimkeeper -o json $*':" \
            "$(grep -o '"cmd": \[[^]]*\]' "$T/$name.log")"
}
expect_unchanged() { # NAME: the last play changed nothing
    [[ $RECAP == *" changed=0 "* && $RECAP == *" failed=0 "* ]] ||
        fail "the second run ($1) changed something: $RECAP" \
            "$(grep -E '^changed:' -B2 "$T/$1.log" | head -20)"
}

# The shim: the rootfs's own containerd-shim-runc-v2 renamed, served from the host's 127.0.0.1
# (a chroot and an nspawn node both share the host's network).
image=$T/image
new_root "$image"
distro_serve_shims "$image" demo
demo_sha=$(sha256_of "$T/artifacts/demo.tar.gz")
shim_vars() { # [EXTRA_SHIM_LINES]: the role's variables, demo first
    cat <<EOF
shimkeeper_deb: $deb
shimkeeper_shims:
  - name: demo
    handler: demo
    runtime_type: io.containerd.demo.v2
    binary: containerd-shim-demo-v2
    url: $SERVER_URL/demo.tar.gz
    sha256: "$demo_sha"
${1:-}
EOF
}
shim_vars >"$T/vars.yml"
# The same, as image-builder passes them (README: ansible_user_vars, key=value with JSON text).
user_vars="shimkeeper_deb=$deb shimkeeper_shims='[{\"name\": \"demo\", \"handler\": \"demo\", \"runtime_type\": \"io.containerd.demo.v2\", \"binary\": \"containerd-shim-demo-v2\", \"url\": \"$SERVER_URL/demo.tar.gz\", \"sha256\": \"$demo_sha\"}]'"

# --- 1. an image root over the chroot connection.
chroot_args=(-c community.general.chroot -i "$image,")
play image-1 -e "$user_vars" "${chroot_args[@]}"
expect_install_command image-1 bake --root /
[[ "$(chroot "$image" dpkg-query -W -f '${Status}' shimkeeper)" == "install ok installed" ]] ||
    fail "the package is not installed in the image: $(grep -A5 'Install shimkeeper' "$T/image-1.log")"
grep -qF "url = \"$SERVER_URL/demo.tar.gz\"" "$image/etc/shimkeeper/shims.d/50-demo.toml" ||
    fail "the drop-in 50-demo.toml does not declare the shim: $(cat "$image/etc/shimkeeper/shims.d/50-demo.toml")"
stored=$(chroot "$image" readlink -e "$shim_link") && [[ $stored == /var/lib/shimkeeper/store/* ]] &&
    cmp -s "$image$stored" "$T/shim/containerd-shim-demo-v2" ||
    fail "$shim_link in the image does not lead to the shim in the store (${stored:-no target})"
grep -qF "runtime_type = \"$shim_link\"" "$image/etc/containerd/config.toml" ||
    fail "containerd's config in the image does not point at $shim_link: $(cat "$image/etc/containerd/config.toml")"
[[ "$(chroot "$image" systemctl is-enabled shimkeeper.service)" == enabled ]] ||
    fail "shimkeeper.service is not enabled in the image"
(($(sk_requests) == 1)) || fail "the bake made $(sk_requests) requests, expected 1"
left=$(find "$image" -xdev -name '*.deb' -not -path '*/var/cache/apt/*')
[[ -z $left ]] || fail "the role left the package file in the image: $left"
play image-2 -e "$user_vars" "${chroot_args[@]}"
expect_unchanged image-2
(($(sk_requests) == 1)) || fail "the second run downloaded again ($(sk_requests) requests)"
# The image as the role left it, copied as onto its disk (for 2.).
cp -a "$image" "$T/disk"

# [kube] from role variables: written into shimkeeper.toml, loaded by shimkeeper (status names
# the node), and the image's bake still works (a cluster's Shims are not baked).
{
    shim_vars
    printf 'shimkeeper_kube:\n  kubeconfig: /etc/shimkeeper/agent.kubeconfig\n  node_name: node-a\n'
} >"$T/vars-kube.yml"
play image-kube -e "@$T/vars-kube.yml" "${chroot_args[@]}"
[[ $RECAP == *" changed=1 "* ]] || fail "adding [kube] changed more than shimkeeper.toml: $RECAP"
chroot "$image" shimkeeper status >"$T/kube-status.out" 2>&1 ||
    fail "shimkeeper does not load the [kube] the role wrote: $(cat "$T/kube-status.out")"
grep -qF "Cluster: node node-a (from [kube] node_name, not confirmed (cannot read kubeconfig /etc/shimkeeper/agent.kubeconfig" \
    "$T/kube-status.out" || fail "status does not show the role's [kube]: $(cat "$T/kube-status.out")"

# A shim with a wrong sha256: the play fails with shimkeeper's message, nothing changes.
config_before=$(tree_digest "$image/etc/containerd")
shim_vars "  - { name: bad, handler: bad, runtime_type: io.containerd.bad.v2, url: \"$SERVER_URL/demo.tar.gz\", sha256: \"$(printf '0%.0s' {1..64})\" }" >"$T/vars-bad.yml"
play_may_fail image-bad -e "@$T/vars-bad.yml" "${chroot_args[@]}" && fail "a wrong sha256 did not fail the play"
grep -q "checksum mismatch for .*demo.tar.gz.*expected sha256 0000" "$T/image-bad.log" ||
    fail "the failed play does not show shimkeeper's reason: $(grep -A5 'fatal:' "$T/image-bad.log")"
[[ "$(tree_digest "$image/etc/containerd")" == "$config_before" ]] ||
    fail "a refused shim changed containerd's config in the image"

# --- 2. the copied image boots converged: no download, containerd started once (at boot).
sk_reset_requests
boot_node "$T/disk"
[[ "$(boot_run systemctl is-active shimkeeper)" == active ]] ||
    fail "the daemon is not active at first boot: $(boot_run journalctl -u shimkeeper --no-pager | tail -20)"
boot_run shimkeeper status >"$T/disk-status.out" 2>&1 || true
grep -q "handler demo: registered -> $shim_link" "$T/disk-status.out" ||
    fail "at first boot CRI does not list demo at $shim_link: $(cat "$T/disk-status.out")"
(($(sk_requests) == 0)) || fail "the first boot downloaded ($(sk_requests) requests): $(tail -5 "$T/server.log")"
starts=$(boot_run sh -c 'wc -l </run/containerd-starts')
((starts == 1)) || fail "containerd started $starts times at first boot, expected once"
boot_poweroff
rm -rf "$T/disk" "$image"

# --- 3. a booted node over nsenter: converged for real through the system bus.
node=$T/node
new_root "$node"
boot_node "$node"
boot_run sh -c ': >/run/containerd-starts'
# Ansible runs as root here; the node has no sudo for the playbook's `become`.
node_args=(-c community.docker.nsenter -i node, -e "ansible_nsenter_pid=$BOOT_LEADER" -e ansible_become=false)
play node-1 -e "@$T/vars.yml" "${node_args[@]}"
expect_install_command node-1 apply
[[ "$(boot_run systemctl is-enabled shimkeeper)" == enabled ]] || fail "shimkeeper.service not enabled"
[[ "$(boot_run systemctl is-active shimkeeper)" == active ]] ||
    fail "the daemon is not active: $(boot_run journalctl -u shimkeeper --no-pager | tail -20)"
boot_run shimkeeper status >"$T/node-status.out" 2>&1 || true
grep -q "handler demo: registered -> $shim_link" "$T/node-status.out" ||
    fail "the running containerd's CRI does not list demo at $shim_link: $(cat "$T/node-status.out")"
starts=$(boot_run sh -c 'wc -l </run/containerd-starts')
((starts == 1)) || fail "containerd.service started $starts times for one new shim, expected once"
play node-2 -e "@$T/vars.yml" "${node_args[@]}"
expect_unchanged node-2
starts=$(boot_run sh -c 'wc -l </run/containerd-starts')
((starts == 1)) || fail "the second run restarted containerd ($starts starts)"
# The shim taken out of the list: the role deletes its drop-in (and only the ones it wrote), and
# shimkeeper removes it from the running containerd.
boot_run sh -c 'echo "# written by hand" >/etc/shimkeeper/shims.d/50-handwritten.toml'
printf 'shimkeeper_deb: %s\nshimkeeper_shims: []\n' "$deb" >"$T/vars-none.yml"
play node-3 -e "@$T/vars-none.yml" "${node_args[@]}"
boot_run test ! -e /etc/shimkeeper/shims.d/50-demo.toml ||
    fail "the drop-in of the shim taken out of shimkeeper_shims is still there"
boot_run test -e /etc/shimkeeper/shims.d/50-handwritten.toml ||
    fail "the role deleted a drop-in it did not write"
boot_run shimkeeper status >"$T/node-status.out" 2>&1 || true
! grep -q "handler demo" "$T/node-status.out" ||
    fail "the removed shim is still installed: $(cat "$T/node-status.out")"
boot_run test ! -e "$shim_link" || fail "$shim_link is still there after the shim left the list"
starts=$(boot_run sh -c 'wc -l </run/containerd-starts')
((starts == 2)) || fail "removing the shim started containerd $((starts - 1)) times, expected once"
boot_poweroff
echo "ok: the role bakes an image root (chroot) that boots converged with no download, and" \
    "converges a booted node (nsenter) through the system bus; second runs change nothing"
