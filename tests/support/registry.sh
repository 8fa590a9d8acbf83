# Helpers for tests that fetch from a real OCI registry: Debian's docker-registry (the CNCF
# distribution registry) on 127.0.0.1, filesystem storage under $T, images made with umoci and
# pushed with skopeo, other manifests pushed with curl through the distribution API.
# Source after common.sh and sk_init.
#
# One storage folder can be served by several registry runs one after the other: tests push
# everything to a plain run, then restart it with TLS, htpasswd or token auth.

# reg_require: skips the test when a tool is missing (scripts/install-deps installs them all).
reg_require() {
    local tool
    for tool in docker-registry umoci skopeo curl openssl htpasswd; do
        command -v "$tool" >/dev/null || skip "$tool is not installed (scripts/install-deps)"
    done
}

sk_free_port() {
    python3 -S -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# reg_start DATA [--tls CERTDIR] [--htpasswd FILE] [--token REALM CERT]: serves DATA and
# exports REG (127.0.0.1:PORT), REG_URL, REG_LOG and REG_PID. Waits until /v2/ answers.
reg_start() {
    local data="$1" n=${#SK_PIDS[@]} tls="" htpasswd="" realm="" token_cert=""
    shift
    while (($#)); do
        case "$1" in
            --tls) tls="$2"; shift 2 ;;
            --htpasswd) htpasswd="$2"; shift 2 ;;
            --token) realm="$2"; token_cert="$3"; shift 3 ;;
            *) fail "reg_start: unknown option $1" ;;
        esac
    done
    local port dir="$T/registry.$n"
    port="$(sk_free_port)"
    mkdir -p "$dir" "$data"
    {
        echo "version: 0.1"
        echo "log: {level: info, formatter: text, accesslog: {disabled: false}}"
        echo "storage: {filesystem: {rootdirectory: $data}, delete: {enabled: true}}"
        echo "http:"
        echo "  addr: 127.0.0.1:$port"
        [[ -z "$tls" ]] || echo "  tls: {certificate: $tls/cert.pem, key: $tls/key.pem}"
        if [[ -n "$htpasswd" ]]; then
            echo "auth: {htpasswd: {realm: test-registry, path: $htpasswd}}"
        elif [[ -n "$realm" ]]; then
            echo "auth: {token: {realm: \"$realm\", service: test-registry, issuer: test-issuer, rootcertbundle: $token_cert}}"
        fi
    } >"$dir/config.yml"
    docker-registry serve "$dir/config.yml" >>"$dir/registry.log" 2>&1 &
    REG_PID=$!
    sk_track "$REG_PID"
    REG="127.0.0.1:$port"
    REG_LOG="$dir/registry.log"
    local scheme=http
    local -a ca=()
    if [[ -n "$tls" ]]; then
        scheme=https
        ca=(--cacert "$tls/cert.pem")
    fi
    REG_URL="$scheme://$REG"
    local deadline=$((SECONDS + 20))
    until curl -s -o /dev/null "${ca[@]}" "$REG_URL/v2/"; do
        kill -0 "$REG_PID" 2>/dev/null || fail "docker-registry exited: $(tail -n 5 "$REG_LOG")"
        ((SECONDS < deadline)) || fail "docker-registry did not answer within 20 s ($REG_LOG)"
        sleep 0.05
    done
    export REG REG_URL REG_LOG REG_PID
}

# reg_stop: stops the registry started last.
reg_stop() {
    kill "$REG_PID" 2>/dev/null || true
    wait "$REG_PID" 2>/dev/null || true
}

# reg_requests: how many API requests the registry started last has answered (its access log,
# the /v2/ probes of reg_start left out).
reg_requests() {
    grep -cE '"(GET|HEAD) /v2/[^ ]' "$REG_LOG" || true
}

# make_image LAYOUT TAG ARCH SETUP: a single-layer image in the OCI layout LAYOUT; SETUP is a
# command run with the rootfs folder as its argument, to put files there. Later calls with the
# same TAG add a layer on top (the rootfs as left by earlier layers is unpacked first).
make_image() {
    local layout="$1" tag="$2" arch="$3" setup="$4" bundle
    bundle="$(mktemp -d "$T/bundle.XXXXXX")"
    rmdir "$bundle"
    [[ -d "$layout" ]] || umoci init --layout "$layout"
    if ! umoci stat --image "$layout:$tag" >/dev/null 2>&1; then
        umoci new --image "$layout:$tag"
        umoci config --image "$layout:$tag" --os linux --architecture "$arch"
    fi
    umoci unpack --rootless --image "$layout:$tag" "$bundle" >/dev/null
    "$setup" "$bundle/rootfs"
    umoci repack --image "$layout:$tag" "$bundle"
    rm -rf "$bundle"
}

# push_image LAYOUT TAG REPO:TAG: copies an image to the plain registry $REG; prints its
# manifest digest.
push_image() {
    local digest_file="$T/digest.$RANDOM"
    skopeo copy --quiet --dest-tls-verify=false --digestfile "$digest_file" \
        "oci:$1:$2" "docker://$REG/$3" >&2
    cat "$digest_file"
}

# push_blob FILE REPO: uploads FILE as a blob (monolithic upload); prints its digest.
push_blob() {
    local file="$1" repo="$2" digest location sep="?"
    digest="sha256:$(sha256_of "$file")"
    location="$(curl -sS -D - -o /dev/null -X POST "$REG_URL/v2/$repo/blobs/uploads/" |
        tr -d '\r' | awk -F': ' 'tolower($1) == "location" { print $2 }')"
    [[ -n "$location" ]] || fail "the registry gave no upload location for $repo"
    [[ "$location" == http* ]] || location="$REG_URL$location"
    [[ "$location" != *\?* ]] || sep="&"
    curl -sSf -o /dev/null -X PUT -H 'Content-Type: application/octet-stream' \
        --data-binary @"$file" "$location${sep}digest=$digest" || fail "blob upload failed"
    echo "$digest"
}

# push_manifest FILE REPO REF MEDIA_TYPE: PUTs a manifest or index; prints its digest.
push_manifest() {
    curl -sSf -o /dev/null -X PUT -H "Content-Type: $4" --data-binary @"$1" \
        "$REG_URL/v2/$2/manifests/$3" || fail "the registry refused the manifest $1"
    echo "sha256:$(sha256_of "$1")"
}

# manifest_of REPO REF: the manifest JSON as the registry serves it.
manifest_of() {
    curl -sSf -H 'Accept: application/vnd.oci.image.manifest.v1+json' "$REG_URL/v2/$1/manifests/$2"
}

# blob_path DATA DIGEST: where filesystem storage keeps a blob's bytes.
blob_path() {
    local hex="${2#sha256:}"
    echo "$1/docker/registry/v2/blobs/sha256/${hex:0:2}/$hex/data"
}

# token_server_start CERTDIR USER:PASSWORD: the test's token issuer (registry_token_server.py)
# signing with CERTDIR's key; exports TOKEN_REALM and TOKEN_LOG.
token_server_start() {
    local n=${#SK_PIDS[@]}
    local port_file="$T/token.$n.port"
    TOKEN_LOG="$T/token.$n.log"
    : >"$TOKEN_LOG"
    python3 "$SK_SUPPORT_DIR/registry_token_server.py" --port-file "$port_file" \
        --cert "$1/cert.pem" --key "$1/key.pem" --user "$2" --log "$TOKEN_LOG" \
        2>>"$T/token.$n.err" &
    sk_track $!
    sk_wait_for_file "$port_file" 10 || fail "the token server did not start ($T/token.$n.err)"
    TOKEN_REALM="http://127.0.0.1:$(<"$port_file")/token"
    export TOKEN_REALM TOKEN_LOG
}

# auth_file FILE HOST USER:PASSWORD: a containers-auth.json with credentials for HOST.
auth_file() {
    printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$2" "$(printf '%s' "$3" | base64 -w0)" >"$1"
}
