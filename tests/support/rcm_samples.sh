# shellcheck shell=bash
# runtime-class-manager's sample Shims in their shipped field layout (tests/fixtures/rcm/), made
# concrete for a test: rcm_sample FILE BASE_URL [DIR] prints the fixture with @ARTIFACTS@ replaced
# by BASE_URL (the test's artifact server) and each @SHA256:<file>@ by the sha256 of DIR/<file>;
# without DIR (admission tests, nothing is fetched) by a fixed well-formed digest.
#   rcm_sample sample_shim_spin.yaml "$SERVER_URL" "$T/artifacts" | kube_admin apply -f -

RCM_FIXTURES="$(cd "$(dirname "${BASH_SOURCE[0]}")/../fixtures/rcm" && pwd)"

rcm_sample() {
    local file=$1 base=$2 dir=${3:-}
    python3 -S - "$RCM_FIXTURES/$file" "$base" "$dir" <<'PY'
import hashlib, re, sys
path, base, folder = sys.argv[1:4]
text = open(path).read().replace("@ARTIFACTS@", base.rstrip("/"))
def digest(match):
    if not folder:
        return "0123456789abcdef" * 4
    with open(folder + "/" + match.group(1), "rb") as artifact:
        return hashlib.sha256(artifact.read()).hexdigest()
sys.stdout.write(re.sub(r"@SHA256:([A-Za-z0-9._-]+)@", digest, text))
PY
}

# rcm_sample_files FILE: the artifact file names FILE's locations name, one a line.
rcm_sample_files() {
    grep -oE '@ARTIFACTS@/[^"]+' "$RCM_FIXTURES/$1" | sed 's#^@ARTIFACTS@/##'
}
