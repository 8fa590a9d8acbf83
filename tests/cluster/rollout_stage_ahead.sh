#!/usr/bin/env bash
# A node stages a waiting Shim's artifact before it asks for a rollout slot, so the slot holds the
# change and not the download. Four sandbox roots, Shim demo with maxUpdate 1 and a download of
# about two seconds:
#   - node-1..3 (the default, stage_ahead on) log the artifact staged before they took their
#     slot, and their transaction in the slot downloads nothing;
#   - node-4 (stage_ahead = false) downloads in its slot, as before;
#   - the record keeps the bound: one holder at a time, no node changing without a slot.
# Then generation 2 (another artifact) waits, staged, while Shim other commits on every node: that
# commit's garbage collection keeps what is staged, so each staging node downloads generation 2
# once. Then generation 3 names a sha256 its artifact does not have: every waiting node's staging fails
# and is only logged (nothing halts a rollout but a slot marked failed); the one node granted a
# slot fails there, the rollout halts, and no node has changed, nor stored the bad artifact.
# Last, the daemon answers while it stages: with Shim held's download kept open by the server,
# Shim quick, applied after it, is staged, granted and installed on node-1..3 all the same (their
# status.json saying held stages before it asks, its staging thread at nice 10 beside the daemon's
# at 0); held deleted stops its downloads, and nothing of
# it stays.
# seconds-about: 75
source "${SHIMKEEPER_SOURCE_DIR:?}/tests/support/common.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_harness.sh"
source "$SHIMKEEPER_SOURCE_DIR/tests/support/kube_rollout.sh"
rollout_testbed
rate=$(($(stat -c %s "$T/www/demo.tar.gz") / 2)) # two seconds a download
ROLLOUT_STAGE_AHEAD=true rollout_agents 1 3 rollout=yes
ROLLOUT_STAGE_AHEAD=false rollout_agents 4 4 rollout=yes
nodes=(node-1 node-2 node-3 node-4)
grep -qx "stage_ahead = true" "$T/roots/node-1/etc/shimkeeper/shimkeeper.toml" ||
    fail "node-1's config does not turn staging ahead on"

shim_yaml() { # SHA256 [ARCHIVE]
    kube_shim_yaml demo "$SERVER_URL/slow/$rate/${2:-demo.tar.gz}" "$1" \
        "  nodeSelector: {rollout: \"yes\"}
  rolloutStrategy: {rolling: {maxUpdate: 1}}"
}
all_done() { # [GENERATION]
    rollout_finished_on demo "${1:-1}" "${nodes[@]}" && [[ -z "$(rollout_slot_holders)" ]]
}
rollout_record
sha=$(sha256_of "$T/www/demo.tar.gz")
shim_yaml "$sha" | kube_admin apply -f - >/dev/null
kube_wait_for 120 all_done ||
    fail "not every node finished: $(for n in "${nodes[@]}"; do echo "$n $(rollout_annotation "$n" demo)"; done)"
report=$(rollout_check demo 1 "" --nodes "${nodes[*]}") || fail "the rollout broke its bound: $report"

# first_line LOG PATTERN: the number of the first line of LOG with PATTERN (0: none).
first_line() { awk -v p="$2" 'index($0, p) { print NR; found = 1; exit } END { if (!found) print 0 }' "$1"; }
for node in node-1 node-2 node-3; do
    log=$T/roots/$node.log
    staged=$(first_line "$log" "demo: staged sha256:$sha ahead of its rollout slot")
    took=$(first_line "$log" "took slot demo-slot-")
    ((staged > 0 && took > staged)) ||
        fail "$node did not stage its artifact before it took its slot (lines $staged, $took): $(cat "$log")"
    downloads=$(grep -c "fetch demo: downloading" "$log" || true)
    ((downloads == 1)) || fail "$node downloaded $downloads times, not once (ahead of its slot): $(cat "$log")"
    rollout_log_order "$log" demo || fail "$node's log lacks slot, change, release in order: $(cat "$log")"
done
log=$T/roots/node-4.log
took=$(first_line "$log" "took slot demo-slot-")
downloading=$(first_line "$log" "fetch demo: downloading")
((took > 0 && downloading > took)) || fail "node-4 (stage_ahead = false) did not download in its slot: $(cat "$log")"
grep -q "ahead of its rollout slot" "$log" && fail "node-4 staged ahead with stage_ahead = false: $(cat "$log")"
pass "node-1..3 staged demo before their slots and did not download in them; node-4 downloaded in its slot; one holder at a time"

echo "--- generation 2 waits staged while another Shim commits: its artifact is kept"
# The coordinators are stopped until every staging node has staged generation 2 and Shim other
# (no rolling strategy: no slot) has committed on it; the commit's garbage collection must keep
# the staged artifact, which no generation uses yet, or the slot downloads it again.
zcat "$T/www/demo.tar.gz" | gzip -2 >"$T/www/demo2.tar.gz" # not make_shim_archive's level
make_shim_archive "$(shim_binary_for other)" "$T/www/other.tar.gz"
sha2=$(sha256_of "$T/www/demo2.tar.gz")
for pid in "${COORDINATOR_PIDS[@]}"; do kill -STOP "$pid"; done
shim_yaml "$sha2" demo2.tar.gz | kube_admin apply -f - >/dev/null
staged2() { grep -q "demo: staged sha256:$sha2 ahead of its rollout slot" "$T/roots/$1.log"; }
for node in node-1 node-2 node-3; do
    kube_wait_for 30 staged2 "$node" || fail "$node did not stage generation 2: $(tail -n 20 "$T/roots/$node.log")"
done
kube_shim_yaml other "$SERVER_URL/other.tar.gz" "$(sha256_of "$T/www/other.tar.gz")" \
    '  nodeSelector: {rollout: "yes"}' | kube_admin apply -f - >/dev/null
other_committed() { grep -q "install of handler other (.*) committed" "$T/roots/$1.log"; }
for node in node-1 node-2 node-3; do
    kube_wait_for 60 other_committed "$node" || fail "Shim other did not commit on $node: $(tail -n 20 "$T/roots/$node.log")"
done
for pid in "${COORDINATOR_PIDS[@]}"; do kill -CONT "$pid"; done
kube_wait_for 120 all_done 2 ||
    fail "generation 2 did not reach every node: $(for n in "${nodes[@]}"; do echo "$n $(rollout_annotation "$n" demo)"; done)"
for node in node-1 node-2 node-3; do
    log=$T/roots/$node.log
    downloads=$(grep -c "fetch demo: downloading .*/demo2.tar.gz" "$log" || true)
    ((downloads == 1)) ||
        fail "$node downloaded generation 2 $downloads times (another Shim's commit collected what it staged?): $(grep "fetch demo\|staged\|committed" "$log")"
done
pass "node-1..3 staged generation 2 once; Shim other's commit kept it, and their slots downloaded nothing"

echo "--- generation 3: a sha256 the artifact does not have"
configs_before=$(for n in "${nodes[@]}"; do sha256sum "$T/roots/$n/etc/containerd/config.toml"; done)
bad=$(printf 'not the artifact' | sha256sum | cut -d' ' -f1)
shim_yaml "$bad" | kube_admin apply -f - >/dev/null
halted() { [[ "$(kube_admin get shim demo -o jsonpath='{.status.conditions[?(@.type=="RolloutHalted")].status}')" == True ]]; }
kube_wait_for 90 halted || fail "generation 3 did not halt: $(kube_admin get shim demo -o yaml)"
failed=$(rollout_failed_slot)
[[ $(wc -l <<<"$failed") == 1 ]] || fail "not one slot marked failed: $failed"
holder=$(cut -d' ' -f2 <<<"$failed")
for node in node-1 node-2 node-3; do
    [[ $node == "$holder" ]] && continue
    grep -q "demo: could not stage ahead of its rollout slot" "$T/roots/$node.log" ||
        fail "$node, waiting, did not try to stage generation 3 ahead: $(tail -n 20 "$T/roots/$node.log")"
done
configs_after=$(for n in "${nodes[@]}"; do sha256sum "$T/roots/$n/etc/containerd/config.toml"; done)
[[ $configs_after == "$configs_before" ]] || fail "a node's containerd config changed: $configs_after"
for node in "${nodes[@]}"; do
    [[ ! -e $T/roots/$node/var/lib/shimkeeper/store/sha256/$bad ]] || fail "$node stored the bad artifact"
done
pass "a failed staging halted nothing; $holder failed in its slot and halted the rollout; no node changed or stored it"

echo "--- the daemon answers while it stages: a held download delays no other Shim"
background=(node-1 node-2 node-3)
for node in "${background[@]}"; do kube_admin label node "$node" background=yes >/dev/null; done
make_shim_archive "$(shim_binary_for held)" "$T/www/held.tar.gz"
make_shim_archive "$(shim_binary_for quick)" "$T/www/quick.tar.gz"
held_sha=$(sha256_of "$T/www/held.tar.gz")
kube_shim_yaml held "$SERVER_URL/hold/100/held.tar.gz" "$held_sha" '  nodeSelector: {background: "yes"}
  rolloutStrategy: {rolling: {maxUpdate: 1}}' | kube_admin apply -f - >/dev/null
held_downloading() { grep -q "fetch held: downloading" "$T/roots/$1.log"; }
# held_wait NODE: what the node's status.json says held waits for.
held_wait() {
    python3 -S -c 'import json, sys
print(json.load(open(sys.argv[1])).get("result", {}).get("waiting", {}).get("held", ""))' \
        "$T/roots/$1/run/status.json" 2>/dev/null
}
says_staging_first() {
    [[ $(held_wait "$1") == "staging the artifact of Shim/held ahead of its rollout slot; this node asks for the slot once it is stored" ]]
}
for node in "${background[@]}"; do
    kube_wait_for 30 held_downloading "$node" || fail "$node did not start staging held: $(tail -n 20 "$T/roots/$node.log")"
    kube_wait_for 30 says_staging_first "$node" ||
        fail "$node's status.json does not say held is staging before it asks: '$(held_wait "$node")'"
done
# The staging thread runs 10 nice levels below the daemon; the daemon's own threads keep nice 0
# (field 19 of each task's stat, after the command name in parentheses).
task_nices() { for stat in /proc/"$1"/task/*/stat; do sed 's/^.*) //' "$stat" | cut -d' ' -f17; done | sort -n | uniq -c | tr -s ' ' | paste -sd,; }
for node in "${background[@]}"; do
    nices=$(task_nices "${ROLLOUT_PIDS[$node]}")
    [[ $(sed 's/^.*) //' "/proc/${ROLLOUT_PIDS[$node]}/stat" | cut -d' ' -f17) == 0 ]] ||
        fail "$node's main thread is not at nice 0 (tasks by nice: $nices)"
    [[ ,$nices, == *" 10,"* ]] || fail "$node stages held with no thread at nice 10 (tasks: count nice, $nices)"
done
kube_shim_yaml quick "$SERVER_URL/quick.tar.gz" "$(sha256_of "$T/www/quick.tar.gz")" \
    '  nodeSelector: {background: "yes"}
  rolloutStrategy: {rolling: {maxUpdate: 3}}' | kube_admin apply -f - >/dev/null
nodes=("${background[@]}")
kube_wait_for 60 rollout_all_finished quick 1 ||
    fail "quick did not roll out while held's downloads were held: $(for n in "${background[@]}"; do echo "$n $(rollout_annotation "$n" quick)"; done)"
for node in "${background[@]}"; do
    log=$T/roots/$node.log
    grep -q "held: staged sha256" "$log" && fail "$node staged held, whose download the server still holds"
    grep -q "took slot held-slot-" "$log" && fail "$node took a slot for held before it was staged: $(cat "$log")"
done
pass "quick rolled out on node-1..3 while their staging of held waited; none asked held's slot"

kube_admin delete shim held >/dev/null
stopped() { grep -q "held: staging ahead of its rollout slot stopped; nothing was stored" "$T/roots/$1.log"; }
for node in "${background[@]}"; do
    kube_wait_for 30 stopped "$node" || fail "$node did not stop staging the deleted Shim held: $(tail -n 20 "$T/roots/$node.log")"
    [[ ! -e $T/roots/$node/var/lib/shimkeeper/store/sha256/$held_sha ]] || fail "$node stored held"
    leftovers=$(ls -A "$T/roots/$node/var/lib/shimkeeper/tmp" 2>/dev/null || true)
    [[ -z $leftovers ]] || fail "$node left a partial download in the store: $leftovers"
done
curl -fsS "$SERVER_URL/_release" >/dev/null
pass "deleting held stopped its downloads on node-1..3; nothing of it was stored"
