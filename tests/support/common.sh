# Shared helpers for tests/integration/*.sh and tests/node/*.sh. Source it, then call sk_init:
#
#   source "$SHIMKEEPER_SOURCE_DIR/tests/support/common.sh"
#   sk_init
#
# sk_init turns on `set -euo pipefail`, makes a temp folder $T and a node root $ROOT="$T/root"
# (with $ROOT/etc/shimkeeper/shims.d), and installs an EXIT trap that stops every process
# started through these helpers, removes $T when the test passed or was skipped, and keeps
# it (printing its path) when the test failed.
#
# Environment from CTest: SHIMKEEPER (the built binary), SHIMKEEPER_SOURCE_DIR,
# SHIMKEEPER_BUILD_DIR. Exit code 77 means "skipped".
#
# Python: the one-liners here and in the scenarios (JSON read back in polling loops, free ports)
# use only the standard library and run as `python3 -S`, without `site`, which imports every
# .pth file of the installed packages at each start: one that this workplace's machines carry
# imports certifi, 25 to 45 ms of CPU a call, and a whole run makes about 1,800 calls. The flag
# is written at each call: a shell function named python3 would not do, since one started in the
# background leaves $! the subshell's PID, and killing that orphans the server.
#
# Naming convention for shims in tests: shim name "demo" has handler "demo" (unless given),
# runtime_type "io.containerd.demo.v2" and binary "containerd-shim-demo-v2".

SK_SUPPORT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SK_PIDS=()
SK_OUT_SEQ=0

# fail MSG...: ends the test with a readable message.
fail() {
    echo "FAIL: $*" >&2
    [[ -n "${T:-}" && -d "$T" ]] && echo "FAIL: $*" >"$T/.failed"
    exit 1
}

# skip MSG...: ends the test as skipped (CTest SKIP_RETURN_CODE 77).
skip() {
    echo "SKIP: $*" >&2
    exit 77
}

sk__cleanup() {
    local rc=$?
    set +e
    local pid
    # A hook that holds a transaction until the test releases it (kube_rollout.sh's
    # ROLLOUT_HOLD_UNTIL) lets go now: a test that failed before its release would otherwise
    # wait here for that agent for ever.
    [[ -n "${T:-}" && -d "$T" ]] && touch "$T/.ending"
    # Only the tracked processes that are still this shell's children: one that ended (a test
    # stopped and waited for it) left its PID free, and on a busy machine another process may
    # have it by now (a whole run once lost an unrelated test's server and its stall watcher's
    # sleep to such a stray TERM).
    local -A alive=()
    for pid in $(jobs -p); do alive[$pid]=1; done
    local -a stopping=()
    for pid in "${SK_PIDS[@]}"; do
        [[ -n ${alive[$pid]:-} ]] && stopping+=("$pid")
    done
    for pid in "${stopping[@]}"; do
        kill "$pid" 2>/dev/null
        kill -CONT "$pid" 2>/dev/null # a process a failed test left stopped takes its TERM now
    done
    for pid in "${stopping[@]}"; do
        wait "$pid" 2>/dev/null
    done
    if [[ -n "${T:-}" && -d "$T" ]]; then
        # SK_FAILURE_EXPECTED (a test of the tests, which passes when the scenario fails as it
        # names): such a failure keeps nothing; any other failure keeps the files as usual.
        if [[ $rc -eq 0 || $rc -eq 77 ]]; then
            rm -rf "$T"
        elif sk_failure_expected; then
            echo "the failure this test expects; its files are removed" >&2
            rm -rf "$T"
        else
            echo "test failed (exit $rc); its files are kept in $T" >&2
            if [[ -s "$T/server.log" ]]; then
                echo "--- last server requests ($T/server.log):" >&2
                tail -n 20 "$T/server.log" >&2
            fi
        fi
    fi
    exit "$rc"
}

# sk_failure_expected: this test failed as SK_FAILURE_EXPECTED says it should (its fail message
# holds that text), so a test of the tests keeps nothing.
sk_failure_expected() {
    [[ -n ${SK_FAILURE_EXPECTED:-} && -n ${T:-} && -f $T/.failed ]] &&
        grep -qF -- "$SK_FAILURE_EXPECTED" "$T/.failed"
}

sk_init() {
    set -euo pipefail
    [[ -n "${SHIMKEEPER:-}" ]] || fail "SHIMKEEPER is not set: run through ctest, or export it"
    [[ -x "$SHIMKEEPER" ]] || fail "SHIMKEEPER=$SHIMKEEPER is not an executable file"
    T="$(mktemp -d "${TMPDIR:-/tmp}/sk-test.XXXXXX")"
    ROOT="$T/root"
    mkdir -p "$ROOT/etc/shimkeeper/shims.d"
    export T ROOT
    trap sk__cleanup EXIT
}

# sk_track PID: stop PID when the test ends.
sk_track() {
    SK_PIDS+=("$1")
}

# sk_wait_for_file FILE SECONDS: polls until FILE is non-empty, fails after the deadline.
sk_wait_for_file() {
    local file="$1" deadline=$((SECONDS + $2))
    until [[ -s "$file" ]]; do
        ((SECONDS < deadline)) || return 1
        sleep 0.05
    done
}

# sk_make_cert DIR: a self-signed certificate for 127.0.0.1 and localhost in DIR/cert.pem and
# DIR/key.pem (the certificate is also its own CA bundle).
sk_make_cert() {
    local dir="$1"
    mkdir -p "$dir"
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj "/CN=127.0.0.1" \
        -addext "subjectAltName=IP:127.0.0.1,DNS:localhost" \
        -keyout "$dir/key.pem" -out "$dir/cert.pem" >/dev/null 2>&1 ||
        fail "openssl could not make a test certificate in $dir"
}

# sk_start_server DIR [--tls]: serves DIR with artifact_server.py and exports SERVER_URL
# (http://127.0.0.1:PORT, or https:// with --tls, whose CA bundle is then in $SERVER_CA).
# A later call starts another server and overwrites SERVER_URL: copy it first if you need both.
sk_start_server() {
    local dir="$1" tls="${2:-}" n=${#SK_PIDS[@]}
    local port_file="$T/server.$n.port"
    local -a extra=()
    if [[ "$tls" == "--tls" ]]; then
        sk_make_cert "$T/tls.$n"
        extra=(--tls-cert "$T/tls.$n/cert.pem" --tls-key "$T/tls.$n/key.pem")
    fi
    python3 "$SK_SUPPORT_DIR/artifact_server.py" --dir "$dir" --port-file "$port_file" \
        --log "$T/server.log" "${extra[@]}" 2>>"$T/server.log" &
    local pid=$!
    sk_track "$pid"
    if ! sk_wait_for_file "$port_file" 10; then
        fail "artifact_server.py did not listen within 10 s (log: $T/server.log)"
    fi
    kill -0 "$pid" 2>/dev/null || fail "artifact_server.py exited (log: $T/server.log)"
    SERVER_PORT="$(<"$port_file")"
    if [[ "$tls" == "--tls" ]]; then
        SERVER_URL="https://127.0.0.1:$SERVER_PORT"
        SERVER_CA="$T/tls.$n/cert.pem"
        export SERVER_CA
    else
        SERVER_URL="http://127.0.0.1:$SERVER_PORT"
    fi
    export SERVER_URL SERVER_PORT
}

# sk__server_json: the server's /_requests answer.
sk__server_json() {
    python3 -S - "$SERVER_URL" <<'EOF'
import ssl, sys, urllib.request
context = ssl._create_unverified_context()  # our own test server on 127.0.0.1
print(urllib.request.urlopen(sys.argv[1] + "/_requests", context=context).read().decode())
EOF
}

# sk_requests: prints how many requests the server has answered (all paths).
sk_requests() {
    sk__server_json | python3 -S -c 'import json, sys; print(json.load(sys.stdin)["total"])'
}

# sk_requests_for PATH: prints how many requests the server answered for that URL path.
sk_requests_for() {
    sk__server_json |
        python3 -S -c 'import json, sys; print(json.load(sys.stdin)["paths"].get(sys.argv[1], 0))' "$1"
}

# sk_bytes_for PATH: how many body bytes the server sent for that exact URL path.
sk_bytes_for() {
    sk__server_json |
        python3 -S -c 'import json, sys; print(json.load(sys.stdin)["bytes"].get(sys.argv[1], 0))' "$1"
}

# sk_reset_requests: zeroes the server's counters.
sk_reset_requests() {
    python3 -S - "$SERVER_URL" <<'EOF'
import ssl, sys, urllib.request
urllib.request.urlopen(sys.argv[1] + "/_reset", context=ssl._create_unverified_context()).read()
EOF
}

# sk ARGS...: runs shimkeeper against the test's node root ($SK_CONFIG, if set, is passed as -c).
sk() {
    if [[ -n "${SK_CONFIG:-}" ]]; then
        "$SHIMKEEPER" -c "$SK_CONFIG" --root "$ROOT" "$@"
    else
        "$SHIMKEEPER" --root "$ROOT" "$@"
    fi
}

# expect_exit CODE CMD...: runs CMD with stdout and stderr captured in the file $OUT and fails
# the test, showing the output, if CMD's exit code is not CODE.
expect_exit() {
    local want="$1"
    shift
    SK_OUT_SEQ=$((SK_OUT_SEQ + 1))
    OUT="$T/out.$SK_OUT_SEQ"
    local got=0
    "$@" >"$OUT" 2>&1 || got=$?
    if [[ "$got" != "$want" ]]; then
        {
            echo "FAIL: expected exit $want, got $got from: $*"
            echo "--- output ($OUT):"
            cat "$OUT"
            echo "---"
        } >&2
        exit 1
    fi
}

# expect_output_contains TEXT: the last expect_exit's output holds TEXT (a fixed string).
expect_output_contains() {
    if ! grep -qF -- "$1" "$OUT"; then
        {
            echo "FAIL: the output does not contain: $1"
            echo "--- output ($OUT):"
            cat "$OUT"
            echo "---"
        } >&2
        exit 1
    fi
}

# expect_output_lacks TEXT: the last expect_exit's output does not hold TEXT.
expect_output_lacks() {
    if grep -qF -- "$1" "$OUT"; then
        {
            echo "FAIL: the output contains what it must not: $1"
            echo "--- output ($OUT):"
            cat "$OUT"
            echo "---"
        } >&2
        exit 1
    fi
}

# sha256_of FILE: prints the file's lowercase hex SHA-256.
sha256_of() {
    local sum
    sum="$(sha256sum -- "$1")" || fail "cannot hash $1"
    echo "${sum%% *}"
}

# tree_digest DIR: a stable listing of everything under DIR, one line per entry:
# "<relative path> <type f|d|l|...> <mode> <link target or -> <sha256 of a file or ->".
# Compare two listings to assert that a tree is exactly as it was. A missing DIR prints
# "<absent>".
tree_digest() {
    local dir="$1"
    if [[ ! -e "$dir" && ! -L "$dir" ]]; then
        echo "<absent>"
        return 0
    fi
    local rel type mode target sum
    while IFS=$'\t' read -r -d '' rel type mode target; do
        sum="-"
        if [[ "$type" == f ]]; then
            sum="$(sha256_of "$dir/$rel")"
        fi
        printf '%s %s %s %s %s\n' "$rel" "$type" "$mode" "${target:--}" "$sum"
    done < <(find "$dir" -mindepth 1 -printf '%P\t%y\t%m\t%l\0' | LC_ALL=C sort -z)
}

# shim_binary_for NAME: the binary name our convention gives shim NAME.
shim_binary_for() {
    echo "containerd-shim-$1-v2"
}

# sk_pack_tar_gz DIR OUT.tar.gz ENTRY...: a tar.gz of ENTRY... under DIR, compressed at gzip's
# fastest level: the scenarios pack a copy of an 11 MB shim hundreds of times a run, and the
# default level cost three times the CPU for a tenth less size. Kept in the test cache under a
# hash of the entries (paths, types, modes, link targets, contents): a run packed about 250
# archives of a few dozen distinct contents, 63 s of gzip's CPU, where hashing and copying take a
# tenth of that. The same entries give the same bytes, so only a different content (as a variant's
# VERSION file) gives a different digest.
sk_pack_tar_gz() {
    local dir=$1 out=$2 cache key kept
    shift 2
    cache=${SHIMKEEPER_CACHE:-/var/cache/shimkeeper-test}/tar-gz
    key=$(cd "$dir" && {
        find "$@" -printf '%p %y %m %l\n' | LC_ALL=C sort
        find "$@" -type f -print0 | LC_ALL=C sort -z | xargs -0r sha256sum
    } | sha256sum | cut -c1-32) || return
    # A hit is touched: what no run used for a week (an older shim's archives) is let go below.
    cp "$cache/$key.tar.gz" "$out" 2>/dev/null && touch "$cache/$key.tar.gz" && return
    tar -C "$dir" -I 'gzip -1' -cf "$out" "$@" || return
    # Renamed into place whole: scenarios side by side may pack the same entries at once.
    mkdir -p "$cache" && kept=$(mktemp "$cache/$key.XXXXXX") && cp "$out" "$kept" &&
        chmod 0644 "$kept" &&
        mv -f "$kept" "$cache/$key.tar.gz" &&
        find "$cache" -maxdepth 1 -type f -mtime +7 -delete
}

# make_shim_archive BINARY OUT.tar.gz: a tar.gz whose single top-level entry BINARY is a copy
# of Debian's containerd-shim-runc-v2 (a shim that really runs containers).
make_shim_archive() {
    local binary="$1" out="$2" source=/usr/bin/containerd-shim-runc-v2
    [[ -x "$source" ]] || skip "$source is missing (install Debian's containerd)"
    local staging
    staging="$(mktemp -d "$T/archive.XXXXXX")"
    install -m 0755 "$source" "$staging/$binary"
    sk_pack_tar_gz "$staging" "$out" "$binary"
    rm -rf "$staging"
}

# write_shim_toml FILE NAME HANDLER URL SHA: appends a [[shim]] entry to FILE following the
# naming convention above. An empty SHA writes no sha256 and sets allow_unverified = true.
write_shim_toml() {
    local file="$1" name="$2" handler="$3" url="$4" sha="$5"
    mkdir -p "$(dirname "$file")"
    {
        echo "[[shim]]"
        echo "name = \"$name\""
        echo "handler = \"$handler\""
        echo "runtime_type = \"io.containerd.$name.v2\""
        echo "binary = \"$(shim_binary_for "$name")\""
        if [[ -z "$sha" ]]; then
            echo "allow_unverified = true"
        fi
        echo
        echo "[shim.fetch]"
        echo "url = \"$url\""
        if [[ -n "$sha" ]]; then
            echo "sha256 = \"$sha\""
        fi
        echo
    } >>"$file"
}
