#!/usr/bin/env bash
# Test 1 of the distro label: both packages build from this tree (scripts/package, which keeps
# those it built from the same tree already, e.g. in scripts/test's background), lintian and
# rpmlint find nothing (errors or warnings; the rpmlintrc's filters are justified there), and each
# package holds exactly the files README.md's "Packages" section lists, no more, no less.
# The packages it leaves in build/packages/ are what the other distro tests install.
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/distro.sh"
distro_init
for tool in dpkg-buildpackage dh lintian rpmbuild rpmlint help2man; do
    command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/install-deps)"
done

"$SHIMKEEPER_SOURCE_DIR/scripts/package" >"$T/package.out" ||
    fail "scripts/package failed: $(tail -5 "$T/package.out")"
deb=$(grep '\.deb$' "$T/package.out") || fail "scripts/package printed no .deb: $(cat "$T/package.out")"
rpm=$(grep '\.rpm$' "$T/package.out") || fail "scripts/package printed no .rpm: $(cat "$T/package.out")"
[[ -f $deb && -f $rpm ]] || fail "the printed packages do not exist: $deb $rpm"

# One compile serves both packages: the .deb's build compiles the tree, the .rpm's takes its binary.
logs=$SHIMKEEPER_SOURCE_DIR/build/packages/log
grep -q 'Building CXX object' "$logs/deb.log" || fail "the .deb's build log shows no compile: $logs/deb.log"
if grep -q 'Building CXX object' "$logs/rpm.log"; then
    fail "the .rpm's build compiled the tree again: $logs/rpm.log"
fi

# lintian: no error, no warning (overrides, if any, sit in packaging/deb with their reasons).
# lintian leaves its MLDBM index files (mldbm-elf-*) in TMPDIR: this test's folder, removed after.
TMPDIR=$T lintian --fail-on error,warning --tag-display-limit 0 "$deb" >"$T/lintian.out" 2>&1 ||
    fail "lintian: $(cat "$T/lintian.out")"
grep -E '^[EW]: ' "$T/lintian.out" && fail "lintian reports errors or warnings"

rpmlint -r "$SHIMKEEPER_SOURCE_DIR/packaging/rpm/shimkeeper.rpmlintrc" "$rpm" \
    "$SHIMKEEPER_SOURCE_DIR/packaging/rpm/shimkeeper.spec" >"$T/rpmlint.out" 2>&1 ||
    fail "rpmlint: $(cat "$T/rpmlint.out")"
grep -qE '0 errors, 0 warnings' "$T/rpmlint.out" || fail "rpmlint: $(cat "$T/rpmlint.out")"

# The file lists: regular files and symlinks, plus folders shipped empty, as README lists them.
dpkg-deb -c "$deb" | awk '{ p = $6; sub(/^\./, "", p); print substr($1, 1, 1) " " p }' |
    distro_leaf_paths >"$T/deb.files"
rpm -qp --qf '[%{FILEMODES:perms} %{FILENAMES}\n]' "$rpm" |
    awk '{ print substr($1, 1, 1) " " $2 }' | distro_leaf_paths >"$T/rpm.files"
for format in deb rpm; do
    distro_readme_files "$format" >"$T/$format.readme"
    [[ -s $T/$format.readme ]] || fail "README.md lists no files for the .$format"
    diff -u "$T/$format.readme" "$T/$format.files" >"$T/$format.diff" ||
        fail "the .$format's files differ from README.md's list (- README, + package):" \
            "$(cat "$T/$format.diff")"
done
echo "ok: $deb and $rpm built, lint clean, their files are README's lists"
