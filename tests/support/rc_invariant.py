#!/usr/bin/env python3
"""Samples one RuntimeClass, the Nodes and each node's CRI handler list, over and over, and records
whether a node the RuntimeClass selects ever lacks its handler in CRI (issue 22, item 3).

    rc_invariant.py record SERVER CA TOKEN-FILE RUNTIMECLASS OUT STOP-FILE CRI-CLIENT NODE=SOCKET...
    rc_invariant.py check OUT [--seen HANDLER:NODE ...] [--excluded HANDLER]

Each sample reads the API first (the RuntimeClass, then the Node list, two quorum reads) and only
then asks each selected node's containerd (`cri-client --socket S status`): a node selected at
the API read must still serve the handler a few milliseconds later, because a node takes its
label off before containerd stops serving. A sample while containerd restarts (CRI not
answering) says "unknown" and proves nothing either way. One JSON line per sample in OUT.

`check` fails on any violation, on a recording without samples, and unless every --seen pair
(the RuntimeClass had HANDLER and selected NODE, which served it) and every --excluded handler
(the RuntimeClass had HANDLER while a node labelled for another handler of the shim was left out:
the window the invariant is about) appears."""
import json
import os
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request


def get(server, context, token_file, path):
    request = urllib.request.Request(server + path)
    with open(token_file) as f:
        request.add_header("Authorization", "Bearer " + f.read().strip())
    try:
        with urllib.request.urlopen(request, context=context, timeout=10) as response:
            return json.load(response)
    except urllib.error.HTTPError as error:
        if error.code == 404:
            return None
        raise


def cri_handlers(cri_client, socket):
    try:
        out = subprocess.run([cri_client, "--socket", socket, "status"], capture_output=True,
                             text=True, timeout=5)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        return None
    return [line.split("\t")[1] for line in out.stdout.splitlines() if line.startswith("handler\t")]


def record(args):
    server, ca, token_file, name, out_path, stop_file, cri_client = args[:7]
    sockets = dict(pair.split("=", 1) for pair in args[7:])
    context = ssl.create_default_context(cafile=ca)
    with open(out_path, "a") as out:
        while not os.path.exists(stop_file):
            try:
                rc = get(server, context, token_file, "/apis/node.k8s.io/v1/runtimeclasses/" + name)
                nodes = get(server, context, token_file, "/api/v1/nodes")["items"]
            except (OSError, urllib.error.URLError) as error:
                print("rc_invariant: API read failed: %s" % error, file=sys.stderr)
                time.sleep(0.2)
                continue
            selector = ((rc or {}).get("scheduling") or {}).get("nodeSelector") or {}
            handler = (rc or {}).get("handler")
            sample = {"t": time.time(), "handler": handler, "selector": selector, "nodes": {}}
            for node in nodes:
                node_name = node["metadata"]["name"]
                if node_name not in sockets:
                    continue
                labels = node["metadata"].get("labels") or {}
                entry = {"labels": {k: v for k, v in labels.items() if k in selector}}
                entry["selected"] = rc is not None and bool(selector) and all(
                    labels.get(k) == v for k, v in selector.items())
                if entry["selected"]:
                    served = cri_handlers(cri_client, sockets[node_name])
                    entry["cri"] = "unknown" if served is None else (
                        "serves" if handler in served else "lacks")
                sample["nodes"][node_name] = entry
            out.write(json.dumps(sample) + "\n")
            out.flush()
            time.sleep(0.05)  # the sampling cadence


def check(args):
    out_path, rest = args[0], args[1:]
    seen_wanted, excluded_wanted = set(), set()
    while rest:
        flag, value, rest = rest[0], rest[1], rest[2:]
        if flag == "--seen":
            seen_wanted.add(tuple(value.split(":", 1)))
        elif flag == "--excluded":
            excluded_wanted.add(value)
        else:
            sys.exit("rc_invariant check: unknown flag " + flag)
    samples = [json.loads(line) for line in open(out_path)]
    violations, seen, excluded = [], set(), set()
    unknown = 0
    for sample in samples:
        for node, entry in sample["nodes"].items():
            if entry.get("cri") == "lacks":
                violations.append("%.3f: RuntimeClass handler %s selects %s (labels %s), whose CRI lacks it"
                                  % (sample["t"], sample["handler"], node, entry["labels"]))
            elif entry.get("cri") == "serves":
                seen.add((sample["handler"], node))
            elif entry.get("cri") == "unknown":
                unknown += 1
            if not entry["selected"] and any(entry["labels"].values()):
                excluded.add(sample["handler"])
    print("samples %d, selected-and-serving pairs %s, handlers that left a labelled node out %s, "
          "CRI not answering %d, violations %d" % (len(samples), sorted(seen), sorted(excluded),
                                                  unknown, len(violations)))
    for violation in violations[:10]:
        print("violation: " + violation)
    problems = []
    if not samples:
        problems.append("no sample was recorded")
    if violations:
        problems.append("%d violation(s)" % len(violations))
    for pair in sorted(seen_wanted - seen):
        problems.append("never saw RuntimeClass handler %s select node %s serving it" % pair)
    for handler in sorted(excluded_wanted - excluded):
        problems.append("never saw RuntimeClass handler %s leave out a node labelled otherwise" % handler)
    if problems:
        sys.exit("rc_invariant: " + "; ".join(problems))


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("record", "check"):
        sys.exit(__doc__)
    (record if sys.argv[1] == "record" else check)(sys.argv[2:])
