#!/usr/bin/env python3
"""Checks a rollout against the API server's own record of it (tests/support/kube_rollout.sh).

Reads the output of `kubectl get leases -w` and `kubectl get nodes -w` (both with
--output-watch-events -o json) and orders every event by resourceVersion, which is etcd's
revision and so one order across both kinds. Then, for Shim SHIM:

  - the slot Leases: who holds one after each event (a failed slot counts as held);
  - every node that starts changing the Shim (its annotation turning to installing or removing,
    or to it for a new generation, or its label going) must hold a slot at that moment;
  - the most nodes ever holding a slot at once must not exceed LIMIT.

A record that cannot show a violation proves nothing, so it must cover the rollout: both
recordings hold events (after --since-rv), and every node of --nodes took a slot of SHIM and
started changing it there. A change reported only after its slot went (an `installing` report
with no slot held) is a violation like any other: the record cannot tell it from a node that
changed without one.

Prints one line per figure ("max_holders 3", "acquisitions node-1=1 ...", "violations 0"; under
max_holders, "more than LIMIT holders at once: N" when it is) and exits 1 on any violation, a
maximum above LIMIT or a record that does not cover the rollout.

  rollout_timeline.py LEASE_EVENTS NODE_EVENTS SHIM LIMIT [--since-rv N] [--nodes "A B ..."]
"""

import argparse
import json
import sys

KEY = "shim.containerd.x-k8s.io/"


def grant_id(lease):
    """A slot Lease's grant id: the one a hand-over gave it, else the Lease's uid."""
    meta = lease.get("metadata") or {}
    return (meta.get("annotations") or {}).get(KEY + "grant") or meta.get("uid", "")


def events(path):
    text = open(path).read()
    decoder = json.JSONDecoder()
    at = 0
    while True:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            return
        try:
            event, at = decoder.raw_decode(text, at)
        except json.JSONDecodeError:
            return  # a watch cut off mid-object at the end
        yield event


def rv(event):
    return int(event["object"]["metadata"].get("resourceVersion", "0"))


def main():
    parser = argparse.ArgumentParser()
    for name in ("lease_file", "node_file", "shim"):
        parser.add_argument(name)
    parser.add_argument("limit", type=int)
    parser.add_argument("--since-rv", type=int, default=0)
    parser.add_argument("--nodes", default="", help="nodes that must each appear changing SHIM")
    args = parser.parse_args()
    lease_file, node_file, shim, limit, since = (args.lease_file, args.node_file, args.shim,
                                                 args.limit, args.since_rv)
    merged = [("lease", e) for e in events(lease_file)] + [("node", e) for e in events(node_file)]
    merged.sort(key=lambda item: rv(item[1]))
    holders = {}  # lease name -> node
    grants = {}  # lease name -> its grant id (a hand-over to the same node is a new acquisition)
    node_state = {}  # node -> (state, has label)
    acquisitions = {}
    max_holders = 0
    violations = []
    started = set()  # nodes seen starting a change of SHIM
    recorded = {"lease": 0, "node": 0}
    for kind, event in merged:
        obj = event["object"]
        meta = obj["metadata"]
        if rv(event) > since:
            recorded[kind] += 1
        annotations = meta.get("annotations") or {}
        if kind == "lease":
            if annotations.get(KEY + "shim") != shim:
                continue
            name = meta["name"]
            holder = (obj.get("spec") or {}).get("holderIdentity", "")
            grant = grant_id(obj)
            if event["type"] == "DELETED" or not holder:
                holders.pop(name, None)
                grants.pop(name, None)
            else:
                anew = holders.get(name) != holder or grants.get(name) != grant
                if anew and rv(event) > since:
                    acquisitions[holder] = acquisitions.get(holder, 0) + 1
                holders[name] = holder
                grants[name] = grant
            if rv(event) > since:
                max_holders = max(max_holders, len(set(holders.values())))
            continue
        node = meta["name"]
        labels = meta.get("labels") or {}
        try:
            state = json.loads(annotations.get(KEY + shim, "null") or "null")
        except json.JSONDecodeError:
            state = None
        now = ((state or {}).get("state"), KEY + shim in labels, (state or {}).get("generation"))
        before = node_state.get(node, (None, False, None))
        node_state[node] = now
        if event["type"] == "DELETED" or rv(event) <= since:
            continue
        # A new state, or the same one for a new generation (a sandbox root stays `installing`
        # from one generation to the next: it never restarts containerd).
        starts = now[0] in ("installing", "removing") and (now[0], now[2]) != (before[0], before[2])
        label_goes = before[1] and not now[1]
        if starts or label_goes:
            started.add(node)
        if (starts or label_goes) and node not in holders.values():
            violations.append("%s at rv %d: %s without a slot (holders: %s)" % (
                node, rv(event), "label removed" if label_goes else now[0],
                ", ".join(sorted(set(holders.values()))) or "none"))
    print("max_holders %d" % max_holders)
    if max_holders > limit:
        print("  more than %d holders at once: %d" % (limit, max_holders))
    print("acquisitions " + " ".join("%s=%d" % kv for kv in sorted(acquisitions.items())))
    print("violations %d" % len(violations))
    for line in violations:
        print("  " + line)
    # The record must cover the rollout: a dead recorder gives max_holders 0 and violations 0.
    uncovered = []
    for what, count in recorded.items():
        if count == 0:
            uncovered.append("no %s event recorded (is the watch recorder alive?)" % what)
    for node in args.nodes.split():
        if node not in acquisitions:
            uncovered.append("%s never took a slot of %s in the record" % (node, shim))
        if node not in started:
            uncovered.append("%s never started changing %s in the record" % (node, shim))
    if uncovered:
        print("uncovered %d" % len(uncovered))
        for line in uncovered:
            print("  " + line)
    sys.exit(1 if violations or uncovered or max_holders > limit else 0)


if __name__ == "__main__":
    main()
