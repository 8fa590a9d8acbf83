#!/usr/bin/env bash
# Compare before replace: an edit made to containerd's config by someone else between
# shimkeeper's plan and its write is never overwritten. Injected at fault points (fault-injection
# build): an edit before the first change makes the transaction plan once more and succeed with
# both changes in the file; an edit right before the config write (after the links flipped)
# rolls back and plans once more; an edit that keeps coming back is an error naming the file,
# with the edit kept and the node as it was.
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?run through ctest}/tests/support/common.sh"
sk_init
"$SHIMKEEPER" -o json version | grep -q fault_points || skip "not a fault-injection build"

mkdir -p "$T/www" "$ROOT/etc/containerd"
make_shim_archive "$(shim_binary_for demo)" "$T/www/demo.tar.gz"
sk_start_server "$T/www"
config="$ROOT/etc/containerd/config.toml"
containerd config default >"$config"
drop_in="$ROOT/etc/shimkeeper/shims.d/10-demo.toml"
write_shim_toml "$drop_in" demo demo "$SERVER_URL/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")"

# edit_once STEP MARK: a hook that appends "# MARK" to the config the first time STEP is reached.
edit_once() {
    echo "$1:[ -e '$T/$2.done' ] || { echo '# $2' >>'$config' && touch '$T/$2.done'; }"
}

for step in planned links; do
    export SHIMKEEPER_FAULT_RUN="$(edit_once "$step" "edit-at-$step")"
    expect_exit 0 sk apply --no-restart
    unset SHIMKEEPER_FAULT_RUN
    expect_output_contains "changed on disk"
    expect_output_contains "planning again"
    expect_output_contains "Committed generation"
    grep -qx "# edit-at-$step" "$config" || fail "$step: the other writer's edit was lost"
    grep -qF 'runtimes.demo]' "$config" || fail "$step: the shim's block is missing after re-planning"
    rm "$drop_in"
    expect_exit 0 sk apply --no-restart # back to no shim for the next round
    write_shim_toml "$drop_in" demo demo "$SERVER_URL/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")"
done

# An edit at every attempt: refused after one re-plan, naming the file; nothing of ours stays.
cp "$config" "$T/before.toml"
export SHIMKEEPER_FAULT_RUN="links:echo '# again' >>'$config'"
expect_exit 1 sk apply --no-restart
unset SHIMKEEPER_FAULT_RUN
expect_output_contains "/etc/containerd/config.toml changed on disk"
[[ "$(grep -c '^# again$' "$config")" == 2 ]] || fail "the other writer's edits were not both kept"
! grep -qF 'runtimes.demo]' "$config" || fail "a refused apply left its block in the config"
[[ ! -e "$ROOT/var/lib/shimkeeper/bin/$(shim_binary_for demo)" ]] || fail "the bin/ link was not rolled back"
