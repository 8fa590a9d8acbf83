#!/usr/bin/env bash
# containerd's config as a symlink (config management owning the file elsewhere): apply edits the
# file at the end of the chain in its own directory and the link stays a link; status names the
# target; removing the shim gives the target back byte for byte. Relative and absolute links, a
# chain of two, and a loop (a clear error that changes nothing).
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest}/tests/support/common.sh"
sk_init

mkdir -p "$T/www" "$ROOT/etc/containerd" "$ROOT/srv/managed"
make_shim_archive "$(shim_binary_for demo)" "$T/www/demo.tar.gz"
sk_start_server "$T/www"
link="$ROOT/etc/containerd/config.toml"
target="$ROOT/srv/managed/config.toml"
containerd config default >"$target"
cp "$target" "$T/original.toml"
drop_in="$ROOT/etc/shimkeeper/shims.d/10-demo.toml"

# round LINK_SETUP...: makes the links with the given commands, installs demo, checks, removes.
round() {
    local what=$1
    write_shim_toml "$drop_in" demo demo "$SERVER_URL/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")"
    expect_exit 0 sk status
    expect_output_contains "config: /etc/containerd/config.toml → /srv/managed/config.toml"
    expect_exit 0 sk apply --no-restart
    expect_output_contains "Committed generation"
    [[ -L "$link" ]] || fail "$what: the link was replaced by a regular file"
    grep -qF 'runtimes.demo]' "$target" || fail "$what: the link's target did not get the block"
    rm "$drop_in"
    expect_exit 0 sk apply --no-restart
    [[ -L "$link" ]] || fail "$what: removal replaced the link"
    cmp -s "$target" "$T/original.toml" || fail "$what: removal did not restore the target"
    echo "ok: $what"
}

ln -s /srv/managed/config.toml "$link"
round "absolute link"
rm "$link"
ln -s ../../srv/managed/config.toml "$link"
round "relative link"
rm "$link"
ln -s ../../srv/managed/config.toml "$ROOT/etc/containerd/middle.toml"
ln -s middle.toml "$link"
round "chain of two"

# A loop: a clear error naming it, and nothing changed.
rm "$link" "$ROOT/etc/containerd/middle.toml"
ln -s loop-b.toml "$ROOT/etc/containerd/config.toml"
ln -s config.toml "$ROOT/etc/containerd/loop-b.toml"
write_shim_toml "$drop_in" demo demo "$SERVER_URL/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")"
before="$(tree_digest "$ROOT/etc")$(tree_digest "$ROOT/srv")"
expect_exit 1 sk apply --no-restart
expect_output_contains "symlink loop"
[[ "$(tree_digest "$ROOT/etc")$(tree_digest "$ROOT/srv")" == "$before" ]] || fail "a symlink loop still changed files"
