#!/usr/bin/env bash
# The Helm chart deploy/helm/shimkeeper, deploy/'s one source, against the real API server:
#   - `helm lint` passes; deploy/ is what scripts/render-deploy makes of the chart (a drift check
#     that names the file and the command); the chart's version is the project's;
#   - the chart rendered with default values and `kubectl apply --dry-run=server` gives, as the
#     server would store them, the same RBAC, admission policies, FlowSchemas, ServiceAccounts and
#     CRD as deploy/, plus the coordinator's Deployment and PodDisruptionBudget, which the server
#     accepts;
#   - values land where they should: another namespace reaches every namespaced object, RBAC and
#     FlowSchema subject and the policies' CEL; image, digest, replicas, nodeSelector, tolerations
#     and resources reach the Deployment; one replica has no PodDisruptionBudget;
#   - nodeServiceAccount=false renders exactly the default objects without the node ServiceAccount
#     and what names it (its RBAC, bindings' subjects, FlowSchema rule, own-Node admission policy);
#   - bad values fail with a message naming the value (values.schema.json).
# seconds-about: 15
set -euo pipefail
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/kube_harness.sh"
kube_require_peers
helm_bin=$("$SHIMKEEPER_SOURCE_DIR/scripts/build-helm" --cached-only 2>/dev/null) ||
    kube_skip "helm is not built; run scripts/build-helm"
command -v jq >/dev/null || kube_skip "jq is not installed"
kube_up "$(mktemp -d /tmp/sk-kube.XXXXXX)"
chart=$SHIMKEEPER_SOURCE_DIR/deploy/helm/shimkeeper
export HELM_CACHE_HOME=$KUBE_DIR/helm/cache HELM_CONFIG_HOME=$KUBE_DIR/helm/config \
    HELM_DATA_HOME=$KUBE_DIR/helm/data

fail() {
    echo "FAIL: $*" >&2
    exit 1
}
helm() { "$helm_bin/helm" "$@"; }

helm lint --strict "$chart" >"$KUBE_DIR/lint.log" 2>&1 || fail "helm lint: $(cat "$KUBE_DIR/lint.log")"
echo "ok: helm lint --strict passes"
HELM=$helm_bin/helm "$SHIMKEEPER_SOURCE_DIR/scripts/render-deploy" --check ||
    fail "deploy/ is not what the chart renders (above)"
echo "ok: deploy/ is the chart rendered with its default values"
version=$(sed -nE 's/^project\(shimkeeper VERSION ([0-9.]+).*/\1/p' \
    "$SHIMKEEPER_SOURCE_DIR/CMakeLists.txt")
for key in version appVersion; do
    [[ $(sed -nE "s/^$key: \"?([^\"]*)\"?\$/\\1/p" "$chart/Chart.yaml") == "$version" ]] ||
        fail "Chart.yaml's $key is not the project's version $version (CMakeLists.txt)"
done
echo "ok: the chart's version and appVersion are $version"

# server_view FILE: the objects FILE holds as the API server would store them on apply (a
# server-side dry run, against what kube_up applied from deploy/), without what the server
# adds per write, one per line, sorted.
server_view() {
    kube_admin apply --dry-run=server -o json -f "$1" | jq -c '
        (if .kind == "List" then .items[] else . end)
        | del(.metadata.uid, .metadata.resourceVersion, .metadata.creationTimestamp,
              .metadata.managedFields, .metadata.generation, .status,
              .metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"])
        | if .metadata.annotations == {} then del(.metadata.annotations) else . end' | sort
}
helm template shimkeeper "$chart" --namespace shimkeeper-system >"$KUBE_DIR/chart.yaml"
server_view "$SHIMKEEPER_SOURCE_DIR/deploy/" >"$KUBE_DIR/deploy.view"
server_view "$KUBE_DIR/chart.yaml" >"$KUBE_DIR/chart.view"
kinds='ClusterRole|ClusterRoleBinding|Role|RoleBinding|ValidatingAdmissionPolicy|ValidatingAdmissionPolicyBinding|FlowSchema|PriorityLevelConfiguration|CustomResourceDefinition|ServiceAccount'
for kind in ${kinds//|/ }; do
    grep -q "\"kind\":\"$kind\"" "$KUBE_DIR/deploy.view" || fail "deploy/ holds no $kind"
done
# by_kind VIEW: the objects of the compared kinds.
by_kind() { grep -E "^\{\"apiVersion\":\"[^\"]*\",\"kind\":\"($kinds)\"" "$1" || true; }
diff <(by_kind "$KUBE_DIR/deploy.view") <(by_kind "$KUBE_DIR/chart.view") >"$KUBE_DIR/view.diff" ||
    fail "the chart's objects differ from deploy/'s as the server sees them: $(head -c 3000 "$KUBE_DIR/view.diff")"
echo "ok: the server sees the chart's RBAC, policies, FlowSchemas, ServiceAccounts and CRD as deploy/'s" \
    "($(by_kind "$KUBE_DIR/chart.view" | wc -l) objects)"
deployment=$(grep '"kind":"Deployment"' "$KUBE_DIR/chart.view") || fail "the chart renders no Deployment"
grep -q '"kind":"PodDisruptionBudget"' "$KUBE_DIR/chart.view" || fail "the chart renders no PodDisruptionBudget"
[[ $(jq -c '.spec.template.spec.containers[0].args' <<<"$deployment") == '["--listen","0.0.0.0:8080"]' ]] ||
    fail "the coordinator's args are $(jq -c '.spec.template.spec.containers[0].args' <<<"$deployment")"
[[ $(jq -r '.spec.replicas' <<<"$deployment") == 2 &&
    $(jq -r '.spec.template.spec.serviceAccountName' <<<"$deployment") == shimkeeper-coordinator &&
    $(jq -r '.spec.template.spec.containers[0].image' <<<"$deployment") == "localhost/shimkeeper:$version" ]] ||
    fail "the default Deployment is not 2 replicas of localhost/shimkeeper:$version as shimkeeper-coordinator: $deployment"
jq -e '.spec.template.spec.securityContext.runAsNonRoot == true and
    .spec.template.spec.securityContext.runAsUser == 65532 and
    .spec.template.spec.securityContext.seccompProfile.type == "RuntimeDefault" and
    (.spec.template.spec.containers[0].securityContext |
     .readOnlyRootFilesystem == true and .allowPrivilegeEscalation == false and
     .capabilities.drop == ["ALL"]) and
    (.spec.template.spec.containers[0] | .livenessProbe.httpGet.path == "/healthz" and
     .readinessProbe.httpGet.path == "/readyz" and .ports[0].name == "metrics" and
     .resources.limits.memory != null and .resources.requests.cpu != null)' <<<"$deployment" >/dev/null ||
    fail "the Deployment lacks its security context, probes, port or resources: $deployment"
echo "ok: the server accepts the Deployment (2 replicas, non-root 65532, read-only root, no" \
    "capabilities, RuntimeDefault seccomp, probes, port metrics) and its PodDisruptionBudget"

# Another namespace, and the coordinator's values.
kube_admin create namespace infra-shims >/dev/null
helm template shimkeeper "$chart" --namespace infra-shims \
    --set image.repository=registry.example.com/platform/shimkeeper --set image.tag=1.2.3 \
    --set coordinator.replicas=3 --set coordinator.nodeSelector.pool=infra \
    --set-json 'coordinator.tolerations=[{"key":"dedicated","operator":"Equal","value":"infra","effect":"NoSchedule"}]' \
    --set coordinator.resources.limits.memory=1Gi >"$KUBE_DIR/other.yaml"
server_view "$KUBE_DIR/other.yaml" >"$KUBE_DIR/other.view"
! grep -q shimkeeper-system "$KUBE_DIR/other.view" ||
    fail "rendered for namespace infra-shims, objects still name shimkeeper-system: $(grep -m3 shimkeeper-system "$KUBE_DIR/other.view")"
deployment=$(grep '"kind":"Deployment"' "$KUBE_DIR/other.view")
jq -e '.metadata.namespace == "infra-shims" and .spec.replicas == 3 and
    .spec.template.spec.containers[0].image == "registry.example.com/platform/shimkeeper:1.2.3" and
    .spec.template.spec.nodeSelector == {"pool": "infra"} and
    .spec.template.spec.tolerations == [{"key": "dedicated", "operator": "Equal", "value": "infra", "effect": "NoSchedule"}] and
    .spec.template.spec.containers[0].resources.limits.memory == "1Gi"' <<<"$deployment" >/dev/null ||
    fail "the values did not reach the Deployment: $deployment"
grep '"kind":"RoleBinding"' "$KUBE_DIR/other.view" | jq -e 'select(.metadata.namespace != "infra-shims"
    or any(.subjects[]; .kind == "ServiceAccount" and .namespace != "infra-shims"))' >/dev/null &&
    fail "a RoleBinding outside infra-shims or binding another namespace's ServiceAccount"
grep -q 'system:serviceaccount:infra-shims:shimkeeper-coordinator' <<<"$(grep '"kind":"ValidatingAdmissionPolicy"' "$KUBE_DIR/other.view")" ||
    fail "the coordinator's admission policies do not name system:serviceaccount:infra-shims:shimkeeper-coordinator"
grep '"kind":"FlowSchema"' "$KUBE_DIR/other.view" |
    jq -e '[.spec.rules[].subjects[] | select(.kind == "ServiceAccount") | .serviceAccount.namespace]
        + [.spec.rules[].resourceRules[]? | .namespaces[]? | select(. != "*")]
        | all(. == "infra-shims")' >/dev/null ||
    fail "a FlowSchema subject or namespace rule is not in infra-shims"
echo "ok: namespace infra-shims reaches objects, bindings, FlowSchemas and CEL; image, replicas," \
    "nodeSelector, tolerations and resources reach the Deployment"
digest=sha256:$(printf '%064d' 7)
helm template shimkeeper "$chart" --namespace shimkeeper-system --set coordinator.replicas=1 \
    --set image.digest="$digest" >"$KUBE_DIR/one.yaml"
server_view "$KUBE_DIR/one.yaml" >"$KUBE_DIR/one.view"
! grep -q '"kind":"PodDisruptionBudget"' "$KUBE_DIR/one.view" ||
    fail "one replica still has a PodDisruptionBudget (it would block every drain)"
[[ $(grep '"kind":"Deployment"' "$KUBE_DIR/one.view" | jq -r '.spec.template.spec.containers[0].image') == \
    "localhost/shimkeeper@$digest" ]] || fail "image.digest does not pin the image"
echo "ok: one replica, no PodDisruptionBudget; image.digest pins the image"

# Without the node ServiceAccount: the default objects less it and whatever names it, nothing else.
helm template shimkeeper "$chart" --namespace shimkeeper-system --set nodeServiceAccount=false \
    >"$KUBE_DIR/kubelet-only.yaml"
server_view "$KUBE_DIR/kubelet-only.yaml" >"$KUBE_DIR/kubelet-only.view"
sa='{"kind":"ServiceAccount","name":"shimkeeper-node","namespace":"shimkeeper-system"}'
by_kind "$KUBE_DIR/chart.view" | jq -c --argjson sa "$sa" '
    select((.kind == "ServiceAccount" and .metadata.name == "shimkeeper-node") or
           ((.kind == "ClusterRole" or .kind == "ClusterRoleBinding") and .metadata.name == "shimkeeper-node") or
           (.metadata.name == "shimkeeper-node-own-node") | not)
    | if .subjects then .subjects |= map(select(. != $sa)) else . end
    | if .kind == "FlowSchema" then .spec.rules |= map(select(any(.subjects[];
          .kind == "ServiceAccount" and .serviceAccount.name == "shimkeeper-node") | not)) else . end' |
    sort >"$KUBE_DIR/kubelet-only.expected"
[[ $(grep -c . "$KUBE_DIR/kubelet-only.expected") -lt $(by_kind "$KUBE_DIR/chart.view" | grep -c .) ]] ||
    fail "the expected kubelet-only view dropped nothing: the filter above matches no object"
diff "$KUBE_DIR/kubelet-only.expected" <(by_kind "$KUBE_DIR/kubelet-only.view") >"$KUBE_DIR/kubelet-only.diff" ||
    fail "nodeServiceAccount=false is not the default less the node ServiceAccount and what names it: $(head -c 3000 "$KUBE_DIR/kubelet-only.diff")"
echo "ok: nodeServiceAccount=false renders the default objects less the node ServiceAccount, its RBAC," \
    "subjects, FlowSchema rule and own-Node policy ($(by_kind "$KUBE_DIR/kubelet-only.view" | wc -l) objects)"

# bad_value MESSAGE-PART SET-ARGS...: helm refuses to render with these values, saying MESSAGE-PART.
bad_value() {
    local expected=$1 out
    shift
    if out=$(helm template shimkeeper "$chart" --namespace shimkeeper-system "$@" 2>&1); then
        fail "helm rendered the chart with $*"
    fi
    grep -qF -- "$expected" <<<"$out" || fail "helm refused $* without saying '$expected': $out"
    echo "ok: $* is refused: $(grep -F -- "$expected" <<<"$out" | head -n1 | sed 's/^ *//')"
}
bad_value "at '/coordinator/replicas': got string, want integer" --set coordinator.replicas=two
bad_value "at '/nodeServiceAccount': got string, want boolean" --set nodeServiceAccount=maybe
bad_value "at '/coordinator/replicas': minimum" --set coordinator.replicas=-1
bad_value "at '/image/pullPolicy': value must be one of" --set image.pullPolicy=Sometimes
bad_value "at '/image/digest': 'latest' does not match" --set image.digest=latest
bad_value "additional properties 'replica' not allowed" --set coordinator.replica=3
bad_value "at '/coordinator/tolerations/0/effect'" \
    --set-json 'coordinator.tolerations=[{"key":"a","effect":"Never"}]'
