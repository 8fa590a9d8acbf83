#!/usr/bin/env python3
"""How well a rolling rollout used its slots, from the API server's record of it (the Lease and
Node watch events that tests/support/watch_record.py keeps, each line stamped with when this
machine saw it). bench/rollout prints these figures; rollout_timeline.py checks the bound.

For one generation GENERATION of Shim SHIM with MAX_UPDATE slots, each node's steps as its own
Node and the slot Leases show them (times, but for the first grant's: when the recorders saw the
events; handoffs compare two times of the Node recorder, so its lag mostly cancels out):

  asked     the node's slot_requests annotation first names SHIM at GENERATION;
  granted   the coordinator creates a slot Lease `<shim>-slot-<i>` held by the node, or hands
            one over to it (an update with a new grant id: shim.containerd.x-k8s.io/grant);
  taken     the node's held_<shim> entry first names that grant, not done (a grant its watch
            has just shown goes in the node's `installing` write before its first change, so
            granted to taken includes its transaction's start: reading, planning, the journal);
  released  the entry says done (or, without one, the grant is freed);
  freed     the Lease is deleted, or handed over to the next grant.

Figures:
  - the first grant's delay: from the moment the first node could ask to the first slot Lease's
    acquireTime. With staging off a node can ask once the Shim exists: from `kubectl apply`
    returning (--applied); with staging on it asks once its staging is done: from the first
    request's own `since` (when the node began to wait). These are the times the objects carry,
    not when the recorders saw them: every party runs on this machine, with one clock;
  - handoffs: a slot (a Lease name) released by its node while another node was waiting
    (asked, not yet granted), to the next node's take of that name's next grant; the same to
    the next grant (the coordinator's part); and the parts of it: released to freed, freed to
    the next grant, granted to taken;
  - occupancy: the time-weighted mean number of slots granted (a Lease live, as the API server's
    bound counts them) while at least one node waited, as a fraction of MAX_UPDATE; beside it
    the same for slots in use (taken, not yet released by their node);
  - how long each grant was held: created to deleted, and taken to released (the slot time is a
    floor of the latter);
  - with --slot-seconds (the slot time each transaction holds its slot for): the steady state
    once every node had asked (with staging ahead, once the last one had staged): the slots
    taken from the last request to the last take, per second, against maxUpdate / slot time,
    the rate of back-to-back waves. On one machine the staging of every node competes with the
    first waves for the cores; from then on only the slots' own work is left;
  - with --cpu-samples (bench/rollout/cpu_sampler.py's record of /proc/stat): how long the cores
    idled while at least one node waited, and, with --applied, the rollout (to the last slot
    freed) against all the CPU the machine used over it on all its cores (what the rollout would
    take if no core ever idled).
  - with --staged-first (bench/rollout's BENCH_STAGED_FIRST: every node staged and asked before
    the coordinator started, at --applied): a node could ask, and began to wait, no earlier than
    then; the figures above count from there.

  rollout_slots.py LEASE_EVENTS LEASE_STAMPED NODE_EVENTS NODE_STAMPED SHIM GENERATION MAX_UPDATE
                   [--applied SECONDS] [--stage-ahead] [--staged-first] [--slot-seconds S]
                   [--cpu-samples FILE]
"""

import argparse
import bisect
import datetime
import json
import math
import os
import statistics

from rollout_timeline import grant_id

PREFIX = "shim.containerd.x-k8s.io/"


def stamped_events(events_path, stamped_path):
    """(seen, event) for each event: line i of the stamped file stamps line i of the events."""
    with open(events_path) as events, open(stamped_path) as stamps:
        for line, stamp in zip(events, stamps):
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                return  # a line cut off at the end
            yield float(stamp.split(" ", 1)[0]), event


def annotation_json(annotations, key):
    try:
        return json.loads(annotations.get(key) or "null") or {}
    except json.JSONDecodeError:
        return {}


def micro_time(text):
    """Seconds since the epoch of a Kubernetes MicroTime ("2026-11-30T01:54:09.721644Z")."""
    when = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ")
    return when.replace(tzinfo=datetime.timezone.utc).timestamp()


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(fraction * len(ordered)) - 1)]


def spread(values):
    if not values:
        return "none"
    return "median %.3f s, p99 %.3f s, max %.3f s" % (
        statistics.median(values), percentile(values, 0.99), max(values))


def time_weighted(changes, counted, while_waiting):
    """Mean of `counted` over the time `while_waiting` > 0, from (time, counter, delta) changes."""
    level = {"granted": 0, "in_use": 0, "waiting": 0}
    area = waited = 0.0
    last = None
    for when, counter, delta in sorted(changes):
        if last is not None and level[while_waiting] > 0:
            area += level[counted] * (when - last)
            waited += when - last
        level[counter] += delta
        last = when
    return (area / waited if waited else 0.0), waited


class CpuSamples:
    """The machine's cumulative busy and idle CPU seconds (all cores) over time, from
    cpu_sampler.py's lines, interpolated between samples."""

    def __init__(self, path):
        ticks = os.sysconf("SC_CLK_TCK")
        rows = [line.split() for line in open(path)]
        rows = [(float(r[0]), int(r[1]) / ticks, int(r[2]) / ticks) for r in rows if len(r) == 3]
        self.times = [r[0] for r in rows]
        self.busy = [r[1] for r in rows]
        self.idle = [r[2] for r in rows]

    def cores(self):
        span = self.times[-1] - self.times[0]
        return round((self.busy[-1] + self.idle[-1] - self.busy[0] - self.idle[0]) / span) if span else 0

    def at(self, series, when):
        i = bisect.bisect_left(self.times, when)
        if i == 0:
            return series[0]
        if i == len(self.times):
            return series[-1]
        t0, t1 = self.times[i - 1], self.times[i]
        return series[i - 1] + (series[i] - series[i - 1]) * (when - t0) / (t1 - t0)

    def between(self, series, start, end):
        return self.at(series, end) - self.at(series, start)


def union(intervals):
    """Disjoint (start, end) covering the given ones, in order."""
    merged = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def cpu_figures(samples, waits, applied, ended, last_request=None, ideal=None):
    spans = union(waits)
    waited = sum(end - start for start, end in spans)
    idle = sum(samples.between(samples.idle, start, end) for start, end in spans)
    cores = samples.cores()
    print("cores idle while nodes waited: %.2f s of %.1f core-seconds (%.1f%%; goal: never)"
          % (idle, waited * cores, 100 * idle / (waited * cores) if waited and cores else 0.0))
    if applied is not None and ended is not None and cores:
        busy = samples.between(samples.busy, applied, ended)
        idle_all = samples.between(samples.idle, applied, ended)
        print("the rollout (%.1f s to the last slot freed) against all the CPU the machine used over it "
              "(%.1f s busy, %.1f s idle) / %d cores = %.1f s: ratio %.2f (goal <= 1.10 where CPU-bound)"
              % (ended - applied, busy, idle_all, cores, busy / cores, (ended - applied) / (busy / cores)))
        # Whether a case is CPU-bound here, whatever coordination does: the CPU the run used
        # against the time its ideal gives, and how busy the cores were while nodes still staged.
        if ideal:
            needed = busy / cores / (1.10 * ideal)
            print("  that CPU on %d cores is %.0f%% of the ideal's %.1f s: %s" % (
                cores, 100 * busy / cores / ideal, ideal,
                "a rollout within 1.10 x the ideal keeps the cores busy at least %.0f%% of it" % (100 * needed)
                if needed <= 1 else "no rollout within 1.10 x the ideal fits on these cores"))
        if last_request is not None and last_request > applied:
            staging_busy = samples.between(samples.busy, applied, last_request)
            print("  from `kubectl apply` to the last node's request (%.1f s: every node staging, the first waves "
                  "holding) the cores were busy %.0f%%"
                  % (last_request - applied, 100 * staging_busy / ((last_request - applied) * cores)))


def main():
    parser = argparse.ArgumentParser()
    for name in ("lease_events", "lease_stamped", "node_events", "node_stamped", "shim"):
        parser.add_argument(name)
    parser.add_argument("generation", type=int)
    parser.add_argument("max_update", type=int)
    parser.add_argument("--applied", type=float, help="when `kubectl apply` returned")
    parser.add_argument("--stage-ahead", action="store_true")
    parser.add_argument("--staged-first", action="store_true",
                        help="every node asked before the coordinator started, at --applied")
    parser.add_argument("--slot-seconds", type=float, help="the slot time (BENCH_SLOT_SECONDS)")
    parser.add_argument("--cpu-samples", help="cpu_sampler.py's record of the machine's CPU")
    parser.add_argument("--ideal", type=float, help="the rollout's ideal time (bench/rollout/run)")
    args = parser.parse_args()
    shim, generation = args.shim, args.generation

    grants = {}  # grant id -> {"name", "holder", "created", "freed"}
    current = {}  # Lease name -> the grant id of its version seen last
    elections = []  # the coordinator Lease's acquireTimes: when each leader's term began
    for seen, event in stamped_events(args.lease_events, args.lease_stamped):
        meta = event["object"]["metadata"]
        notes = meta.get("annotations") or {}
        acquired = (event["object"].get("spec") or {}).get("acquireTime")
        if meta["name"] == "shimkeeper-coordinator" and acquired:
            elections.append(micro_time(acquired))
        if notes.get(PREFIX + "shim") != shim or "-slot-" not in meta["name"]:
            continue
        # A grant is named by its id: the Lease's uid, or the id a hand-over gave it. A version
        # under another id than the name's last one is a hand-over: the last grant went with it.
        gid = grant_id(event["object"])
        before = current.get(meta["name"])
        if before is not None and before != gid and before in grants:
            if grants[before]["freed"] is None:
                grants[before]["freed"] = seen
        current[meta["name"]] = gid
        if notes.get(PREFIX + "generation") != str(generation):
            continue
        grant = grants.setdefault(gid, {
            "name": meta["name"], "holder": (event["object"].get("spec") or {}).get("holderIdentity"),
            "created": seen, "created_rv": int(meta["resourceVersion"]), "freed": None,
            "acquired": micro_time(acquired)})
        if event["type"] == "DELETED":
            grant["freed"] = seen
            current.pop(meta["name"], None)

    asked = {}  # node -> when it first asked for this generation
    began_to_wait = {}  # node -> its request's own `since`: when it began to wait
    taken, released = {}, {}  # grant id -> when its holder took it, released it
    for seen, event in stamped_events(args.node_events, args.node_stamped):
        meta = event["object"]["metadata"]
        notes = meta.get("annotations") or {}
        request = annotation_json(notes, PREFIX + "slot_requests").get(shim) or {}
        if request.get("generation") == generation:
            asked.setdefault(meta["name"], seen)
            began_to_wait.setdefault(meta["name"], micro_time(request["since"]))
        held = annotation_json(notes, PREFIX + "held_" + shim)
        if held.get("grant") in grants:
            taken.setdefault(held["grant"], seen)
            if held.get("done"):
                released.setdefault(held["grant"], seen)
    if not grants:
        print("slots: no slot of %s generation %d in the record" % (shim, generation))
        return
    for gid, grant in grants.items():  # a grant never marked done was released when freed
        if gid not in released and grant["freed"] is not None:
            released[gid] = grant["freed"]

    # The first grant, by the times the objects carry rather than when the two recorders saw
    # them (their lags differ by tens of milliseconds on a busy machine): the request's `since`,
    # the Lease's acquireTime and `kubectl apply` returning, all this machine's clock here.
    first_grant = min(g["acquired"] for g in grants.values())
    if args.staged_first:  # nobody could be granted a slot before the coordinator started
        asked = {node: max(when, args.applied) for node, when in asked.items()}
        could_ask, since = args.applied, "the coordinator's start, every node staged and asking"
    elif args.stage_ahead:
        could_ask = min(began_to_wait.values()) if began_to_wait else None
        since = "its request, once staged"
    else:
        could_ask, since = args.applied, "`kubectl apply` returned, staging off"
    if could_ask is not None:
        print("first grant %.3f s after the first node could ask (%s; goal <= 0.3 s)"
              % (first_grant - could_ask, since))
    if args.staged_first:  # of that, the election: the leader's term begins (its Lease's acquireTime)
        if elections:
            print("  the leader elected %.3f s after the coordinators' start, the first grant %.3f s after that"
                  % (min(elections) - args.applied, first_grant - min(elections)))
    if args.applied is not None and began_to_wait and not args.staged_first:
        print("  the first request %.3f s after `kubectl apply` returned, the first grant %.3f s after it"
              % (min(began_to_wait.values()) - args.applied, first_grant - args.applied))

    # Waiting: from a node's request to its first grant of this generation. A grant the Lease
    # recorder saw before the Node recorder saw its request was no wait at all.
    granted_to = {}
    for grant in sorted(grants.values(), key=lambda g: g["created"]):
        granted_to.setdefault(grant["holder"], grant["created"])
    waits = [(asked[node], granted_to[node]) for node in asked
             if node in granted_to and granted_to[node] > asked[node]]

    # Handoffs: each slot (a Lease name) released while a node waited, to the take of that
    # name's next grant. By name rather than in the order of releases and takes: two slots
    # released together may be granted again in either order.
    def waiting_at(when):
        return any(start <= when < end for start, end in waits)

    by_name = {}
    for gid, grant in sorted(grants.items(), key=lambda item: item[1]["created_rv"]):
        by_name.setdefault(grant["name"], []).append(gid)
    handoffs = []  # (the released grant's id, the next grant's id)
    for gids in by_name.values():
        for released_gid, next_gid in zip(gids, gids[1:]):
            if released_gid in released and next_gid in taken and waiting_at(released[released_gid]):
                handoffs.append((released_gid, next_gid))
    print("handoffs (a slot released by its node while another waited, to the next node's take): %d, %s"
          % (len(handoffs), spread([taken[b] - released[a] for a, b in handoffs])))
    print("  to the next grant (the coordinator's part): %s"
          % spread([grants[b]["created"] - released[a] for a, b in handoffs]))
    parts = [("released to freed", [grants[a]["freed"] - released[a] for a, _ in handoffs
                                    if grants[a]["freed"] is not None]),
             ("freed to the next grant", [grants[b]["created"] - grants[a]["freed"] for a, b in handoffs
                                          if grants[a]["freed"] is not None]),
             ("granted to taken", [taken[b] - grants[b]["created"] for _, b in handoffs])]
    for label, values in parts:
        print("  of which %s: %s" % (label, spread(values)))

    # Occupancy while nodes waited.
    changes = [(start, "waiting", 1) for start, _ in waits] + [(end, "waiting", -1) for _, end in waits]
    for gid, grant in grants.items():
        changes.append((grant["created"], "granted", 1))
        if grant["freed"] is not None:
            changes.append((grant["freed"], "granted", -1))
        if gid in taken:
            changes.append((taken[gid], "in_use", 1))
            if gid in released:
                changes.append((released[gid], "in_use", -1))
    granted_mean, waited = time_weighted(changes, "granted", "waiting")
    in_use_mean, _ = time_weighted(changes, "in_use", "waiting")
    if waited:
        print("slot occupancy while nodes waited (%.1f s): %.2f of %d slots granted, %.0f%% of maxUpdate "
              "(goal >= 95%%); in use (taken, not yet released) %.0f%%"
              % (waited, granted_mean, args.max_update, 100 * granted_mean / args.max_update,
                 100 * in_use_mean / args.max_update))
    else:
        print("slot occupancy: no node ever waited (every node was granted a slot as it asked)")

    held = [g["freed"] - g["created"] for g in grants.values() if g["freed"] is not None]
    used = [released[u] - taken[u] for u in taken if u in released]
    print("slots held per grant: granted to freed %s; taken to released %s, min %.3f s"
          % (spread(held), spread(used), min(used) if used else 0.0))
    if args.slot_seconds and asked:
        last_ask = max(asked.values())
        after = sorted(t for t in taken.values() if t >= last_ask)
        if len(after) >= 2:
            rate = (len(after) - 1) / (after[-1] - after[0])
            ideal = args.max_update / args.slot_seconds
            print("steady state, once every node had asked (the last %.1f s after the first): %d slots taken "
                  "in %.1f s, %.2f per second against maxUpdate / slot time = %.2f: ratio %.2f (goal <= 1.10)"
                  % (last_ask - min(asked.values()), len(after), after[-1] - after[0], rate, ideal, ideal / rate))
            steady = [taken[b] - released[a] for a, b in handoffs if released[a] >= last_ask]
            print("  handoffs in it: %d, %s" % (len(steady), spread(steady)))
    if args.cpu_samples:
        freed = [g["freed"] for g in grants.values() if g["freed"] is not None]
        last_request = max(began_to_wait.values()) if began_to_wait and not args.staged_first else None
        cpu_figures(CpuSamples(args.cpu_samples), waits, args.applied, max(freed) if freed else None,
                    last_request, args.ideal)


if __name__ == "__main__":
    main()
