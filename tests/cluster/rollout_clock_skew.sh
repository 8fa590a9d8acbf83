#!/usr/bin/env bash
# A node whose clock runs 20 s ahead never takes or judges a live slot. Expiry is judged by local
# observation only (the coordinator: how long since it saw a grant or its holder's entry change;
# nodes judge none), never by comparing the writer's time with another clock. 3 agents on sandbox
# roots, maxUpdate 1, downloads of about 5 s; node-1's agent runs under Debian's faketime 20 s
# ahead (the times in its Node's slot entry show it). The API server's record must show at most 1
# holder, every node's change under its slot, and no slot handed from a live holder; `shimkeeper
# apply` on node-1 (20 s ahead) while another node holds the slot asks, waits a lease for a grant,
# and says it waits instead of changing.
# seconds-about: 65
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
command -v faketime >/dev/null || skip "faketime is needed (scripts/install-deps installs it)"
[[ $(faketime -f +20s date +%s) -ge $(($(date +%s) + 19)) ]] || skip "faketime does not shift the clock here"
rollout_require_fault_build
rollout_testbed
rate=$(($(stat -c %s "$T/www/demo.tar.gz") / 5)) # five seconds per download
nodes=(node-1 node-2 node-3)

# node-1 joins the rollout only once another node holds the slot (labelled below): grants go in
# node-name order, so had it asked with the others it could have been first and finished before
# its `apply`, which would then have nothing to ask for.
kube_create_node node-1
rollout_root "$T/roots/node-1" node-1
# libfaketime (LD_PRELOAD) shifts every clock of the process, the monotonic one too. Preloaded
# by hand: the faketime wrapper forks and waits, so killing the PID this test tracks left the
# agent running after the test.
libfaketime=$(compgen -G "/usr/lib/*/faketime/libfaketime.so.1" | head -n 1) ||
    skip "libfaketime.so.1 is not installed"
# An array, not a function: `function &` would leave the agent a grandchild of the tracked PID.
ahead=(env LD_PRELOAD="$libfaketime" FAKETIME=+20s)
"${ahead[@]}" "$SHIMKEEPER" --root "$T/roots/node-1" run --no-restart \
    --status-file /run/status.json >"$T/roots/node-1.log" 2>&1 &
ROLLOUT_PIDS[node-1]=$!
sk_track $!
# The other nodes wait after their write-ahead (a fault-injection hook; they renew meanwhile) until
# $T/go exists, so the slot stays another node's for as long as apply on node-1 waits for a grant.
ROLLOUT_STEPS=$T/steps ROLLOUT_HOLD_UNTIL=$T/go ROLLOUT_HOLD_STEP=planned rollout_agents 2 3 rollout=yes

kube_wait_for 60 coordinator_elected || fail "no coordinator was elected"
rollout_record
kube_shim_yaml demo "$SERVER_URL/slow/$rate/demo.tar.gz" "$(sha256_of "$T/www/demo.tar.gz")" \
    "  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: 1}}" | kube_admin apply -f - >/dev/null

# While another node holds the slot (held at its write-ahead until $T/go): apply on node-1, 20 s
# ahead, asks the coordinator, waits up to a lease for a grant, gets none and says it waits; its
# skewed clock judges no lease of another node's expired.
other_holds() {
    local h
    h=$(kube_admin get lease demo-slot-0 -n shimkeeper-system -o jsonpath='{.spec.holderIdentity}' 2>/dev/null)
    [[ -n $h && $h != node-1 ]]
}
kube_wait_for 60 other_holds || fail "no other node took the slot"
holder=$(kube_admin get lease demo-slot-0 -n shimkeeper-system -o jsonpath='{.spec.holderIdentity}')
kube_admin label node node-1 rollout=yes >/dev/null
applied=$("${ahead[@]}" "$SHIMKEEPER" --root "$T/roots/node-1" apply --no-restart 2>&1) || true
grep -q "not converged: waiting for the coordinator to grant a rollout slot of Shim/demo" <<<"$applied" ||
    fail "apply on node-1 (20 s ahead) did not wait for a grant while $holder held the slot: $applied"
[[ $(kube_admin get lease demo-slot-0 -n shimkeeper-system -o jsonpath='{.spec.holderIdentity}') == "$holder" ]] ||
    fail "the slot left $holder while its transaction was held"
! rollout_finished node-1 demo || fail "node-1 changed while $holder held the only slot"
pass "apply on node-1, 20 s ahead, asked and waits for a grant while $holder holds the slot"
touch "$T/go"

all_finished() {
    rollout_finished_on demo 1 "${nodes[@]}"
}
kube_wait_for 180 all_finished ||
    fail "not every node finished: $(for n in "${nodes[@]}"; do echo "$n $(rollout_annotation "$n" demo)"; done)"
report=$(rollout_check demo 1 "" --nodes "${nodes[*]}") || fail "the rollout broke its bound: $report"
echo "$report"
# The skew was real: node-1 wrote the time of each take and renewal of its grant on its own Node
# (held_demo's "renewed") by its own clock, ~20 s after the API server's time of that very update
# (the Node's managedFields).
skew=$(python3 -S - "$T/nodes.events" <<'PY'
import datetime, json, sys
text = open(sys.argv[1]).read(); dec = json.JSONDecoder(); at = 0
parse = lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00"))
most = None; last = None
while True:
    while at < len(text) and text[at].isspace(): at += 1
    if at >= len(text): break
    e, at = dec.raw_decode(text, at); o = e["object"]
    if e["type"] == "DELETED" or o["metadata"]["name"] != "node-1": continue
    held = (o["metadata"].get("annotations") or {}).get("shim.containerd.x-k8s.io/held_demo")
    if not held or held == last: continue
    last = held
    written = max(parse(f["time"]) for f in o["metadata"].get("managedFields", []) if f.get("time"))
    skew = round((parse(json.loads(held)["renewed"]) - written).total_seconds())
    most = skew if most is None else max(most, skew)
print("" if most is None else most)
PY
)
[[ -n $skew && $skew -ge 18 ]] || fail "node-1's entry does not show its clock 20 s ahead (renewed - the update's time: '${skew}' s)"
# Every takeover in the record is a create after a delete, or a hand-over under a new grant id of
# a grant its holder had said done with or the coordinator had revoked: nobody was handed a Lease
# another node held live.
python3 -S - "$T/leases.events" "$T/nodes.events" <<'PY' || fail "a slot changed holder without being freed first"
import json, sys
def events(path):
    text = open(path).read(); dec = json.JSONDecoder(); at = 0
    while True:
        while at < len(text) and text[at].isspace(): at += 1
        if at >= len(text): return
        e, at = dec.raw_decode(text, at); yield e
K = "shim.containerd.x-k8s.io/"
merged = sorted([("lease", e) for e in events(sys.argv[1])] + [("node", e) for e in events(sys.argv[2])],
                key=lambda item: int(item[1]["object"]["metadata"]["resourceVersion"]))
last, done = {}, set()  # Lease name -> (holder, grant id, revoked); (node, grant id) said done
for kind, e in merged:
    o = e["object"]; meta = o["metadata"]; notes = meta.get("annotations") or {}
    if kind == "node":
        held = json.loads(notes.get(K + "held_demo") or "{}")
        if held.get("done"): done.add((meta["name"], held.get("grant")))
        continue
    name = meta["name"]
    if "-slot-" not in name: continue
    if e["type"] == "DELETED": last.pop(name, None); continue
    now = ((o.get("spec") or {}).get("holderIdentity", ""), notes.get(K + "grant") or meta["uid"],
           bool(notes.get(K + "revoked")))
    before = last.get(name)
    if before and before[0] != now[0] and (before[1] == now[1] or
                                            not (before[2] or (before[0], before[1]) in done)):
        print("%s went from %s to %s without being freed" % (name, before[0], now[0])); sys.exit(1)
    last[name] = now
PY
pass "node-1 ran ${skew} s ahead; at most 1 holder, every change under its slot, no live slot taken"
