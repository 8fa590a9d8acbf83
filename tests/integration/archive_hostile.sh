#!/usr/bin/env bash
# `shimkeeper fetch` against hostile archives served over HTTP: each one must fail the fetch
# (exit 1) with a message naming the offending entry, leave the store exactly as it was
# (no partial artifact, no leftovers in tmp/, bin/ and state untouched) and write nothing
# outside it.
source "$SHIMKEEPER_SOURCE_DIR/tests/support/common.sh"
sk_init

command -v python3 >/dev/null || skip "python3 is needed to craft the hostile archives"
STORE="$ROOT/var/lib/shimkeeper"
SHIMS="$ROOT/etc/shimkeeper/shims.d"
SERVE="$T/serve"
OUTSIDE="$T/outside" # symlinks and paths in the archives aim here
mkdir -p "$SERVE" "$OUTSIDE"
sk_start_server "$SERVE"

# A good shim first, so that the store exists and holds one artifact to be left alone.
GOOD_BINARY="$(shim_binary_for good)"
make_shim_archive "$GOOD_BINARY" "$SERVE/good.tar.gz"
write_shim_toml "$SHIMS/good.toml" good good "$SERVER_URL/good.tar.gz" \
    "$(sha256_of "$SERVE/good.tar.gz")"
expect_exit 0 sk fetch
[[ -x "$STORE/store/sha256/$(sha256_of "$SERVE/good.tar.gz")/$GOOD_BINARY" ]] ||
    fail "the good shim did not land in the store"
BEFORE="$(tree_digest "$STORE")"

# Every hostile archive, as a gzip-compressed tar named <case>.tar.gz in the served folder
# (Python's tarfile writes entries that GNU tar refuses to create).
python3 -S - "$SERVE" "$OUTSIDE" "$(shim_binary_for evil)" <<'PY'
import gzip, io, sys, tarfile

serve, outside, binary = sys.argv[1:4]

def entry(name, kind=tarfile.REGTYPE, data=b"", link="", mode=0o755, size=None):
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = mode
    info.linkname = link
    info.size = len(data) if size is None else size
    return info, io.BytesIO(data) if data else None

def make(case, entries):
    with tarfile.open(f"{serve}/{case}.tar.gz", "w:gz", format=tarfile.PAX_FORMAT) as t:
        for info, data in entries:
            t.addfile(info, data)

make("absolute", [entry(binary, data=b"#!/bin/sh\n"), entry(f"{outside}/planted", data=b"x")])
make("dotdot", [entry("bin/../../../planted", data=b"x")])
make("symlink-absolute", [entry("evil", tarfile.SYMTYPE, link=outside)])
make("symlink-relative", [entry("sub", tarfile.DIRTYPE),
                          entry("sub/evil", tarfile.SYMTYPE, link="../../../outside")])
make("symlink-then-file", [entry("real", tarfile.DIRTYPE),
                           entry("link", tarfile.SYMTYPE, link="real"),
                           entry("link/planted", data=b"x")])
make("hardlink", [entry(binary, data=b"#!/bin/sh\n"),
                  entry("copy", tarfile.LNKTYPE, link=binary)])
make("chardev", [entry("null", tarfile.CHRTYPE)])
make("blockdev", [entry("disk", tarfile.BLKTYPE)])
make("fifo", [entry("pipe", tarfile.FIFOTYPE)])
make("duplicate", [entry(binary, data=b"#!/bin/sh\n"), entry(binary, data=b"#!/bin/sh\n")])
make("too-many", [entry(f"f{i}", data=b"") for i in range(10_001)])

# A bomb: a few hundred bytes on the wire whose header claims 3 GiB of content.
header = tarfile.TarInfo("bomb")
header.size = 3 << 30
with gzip.open(f"{serve}/bomb.tar.gz", "wb") as out:
    out.write(header.tobuf(format=tarfile.GNU_FORMAT))
    out.write(b"\0" * (1 << 20))
PY

# case -> text the error must contain
declare -A EXPECT=(
    [absolute]="entry '$OUTSIDE/planted' is an absolute path"
    [dotdot]="entry 'bin/../../../planted' escapes the archive root"
    [symlink-absolute]="symlink 'evil' -> '$OUTSIDE' points to an absolute path"
    [symlink-relative]="symlink 'sub/evil' -> '../../../outside' escapes the archive root"
    [symlink-then-file]="entry 'link/planted' would be written through 'link'"
    [hardlink]="entry 'copy' is a hard link to '$(shim_binary_for evil)'"
    [chardev]="entry 'null' is a character device"
    [blockdev]="entry 'disk' is a block device"
    [fifo]="entry 'pipe' is a FIFO"
    [duplicate]="entry '$(shim_binary_for evil)' appears more than once"
    [too-many]="more than the limit of 10000 entries"
    [bomb]="entry 'bomb' declares 3221225472 bytes"
)

for case in "${!EXPECT[@]}"; do
    rm -f "$SHIMS/evil.toml"
    write_shim_toml "$SHIMS/evil.toml" evil evil "$SERVER_URL/$case.tar.gz" \
        "$(sha256_of "$SERVE/$case.tar.gz")"
    expect_exit 1 sk fetch
    expect_output_contains "${EXPECT[$case]}"
    AFTER="$(tree_digest "$STORE")"
    if [[ "$AFTER" != "$BEFORE" ]]; then
        diff <(echo "$BEFORE") <(echo "$AFTER") >&2 || true
        fail "$case: the store changed although the fetch failed"
    fi
    [[ -z "$(ls -A "$OUTSIDE")" ]] || fail "$case: something was written outside the store"
done
echo "all ${#EXPECT[@]} hostile archives refused; store unchanged"
