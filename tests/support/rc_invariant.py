#!/usr/bin/env python3
"""Records one RuntimeClass's and the Nodes' watch events and each node's CRI handler list, and
checks that a node the RuntimeClass selects always serves its handler.

    rc_invariant.py record SERVER CA TOKEN-FILE RUNTIMECLASS OUT STOP-FILE CRI-CLIENT NODE=SOCKET...
    rc_invariant.py phase OUT NAME
    rc_invariant.py check OUT [--seen [PHASE@]HANDLER:NODE ...] [--excluded HANDLER]
                              [--max-unknown SHARE] [--end-margin SECONDS]

`record` runs, until STOP-FILE exists, a watch of the RuntimeClass and one of the Nodes (each
event stamped with when this machine received it) and, for each node, one loop asking its
containerd for its handlers (`cri-client --socket S status`) over and over, each answer stamped
with when the question went out and when the answer came. One JSON line per event or answer in
OUT. `phase` marks in OUT that the scenario's phase NAME starts.

`check` replays the events in the order they were received: the RuntimeClass selects a node from
the receipt of the events that made its labels match the selector until the receipt of the one
that ended it. Every CRI answer for that node asked after the selection was received and
answered before it ended is judged: the handler missing is a violation; no answer (containerd
restarting) is counted as unknown. A receipt comes after the change itself, so an answer asked
after the receipt of the selecting event was about a node selected then (sound at the start);
the end of a selection may have happened shortly before its receipt, so answers within
--end-margin (0.2 s) before it are not judged: a node takes its label off, then writes its
config and restarts containerd, which takes longer than a watch event takes to arrive.
It fails on any violation, on a record without RuntimeClass, Node or CRI entries, when CRI did not
answer for more than --max-unknown (0.05) of the judged questions (a checker blind to most of
them proves little), and unless every --seen pair (the RuntimeClass had HANDLER and selected
NODE, which served it; with PHASE@, during that phase) and every --excluded handler (the
RuntimeClass had HANDLER while a node labelled for another handler of the shim was left out: the
window the invariant is about) appears."""
import json
import os
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

PREFIX = "shim.containerd.x-k8s.io/"


class Out:
    def __init__(self, path):
        self.file = open(path, "a")
        self.lock = threading.Lock()

    def write(self, entry):
        with self.lock:
            self.file.write(json.dumps(entry) + "\n")
            self.file.flush()


def request(server, context, token_file, path, timeout):
    req = urllib.request.Request(server + path)
    with open(token_file) as f:
        req.add_header("Authorization", "Bearer " + f.read().strip())
    return urllib.request.urlopen(req, context=context, timeout=timeout)


def node_entry(obj, kind):
    meta = obj["metadata"]
    labels = meta.get("labels") or {}
    # Every label: the RuntimeClass selects on the Shim's nodeSelector as well as the readiness
    # label.
    return {"kind": "node", "name": meta["name"], "rv": int(meta.get("resourceVersion", 0)),
            "labels": dict(labels), "type": kind}


def rc_entry(obj, kind):
    meta = obj["metadata"]
    gone = kind == "DELETED"
    return {"kind": "rc", "rv": int(meta.get("resourceVersion", 0)), "type": kind,
            "handler": None if gone else obj.get("handler"),
            "selector": {} if gone else ((obj.get("scheduling") or {}).get("nodeSelector") or {})}


def watch(server, context, token_file, path, entry_of, keep, out, stop_file, errors):
    """Lists, then watches from the list's version; resumes after each server timeout, and lists
    again after a 410. Each list item is recorded as a SYNC entry (what holds now)."""
    version = None
    while not os.path.exists(stop_file):
        try:
            if version is None:
                with request(server, context, token_file, path, 10) as response:
                    listed = json.load(response)
                now = time.time()
                names = []
                for obj in listed["items"]:
                    if keep(obj):
                        out.write(dict(entry_of(obj, "SYNC"), t=now))
                        names.append(obj["metadata"]["name"])
                out.write({"kind": "list", "path": path, "names": names, "t": now})
                version = listed["metadata"]["resourceVersion"]
            sep = "&" if "?" in path else "?"
            with request(server, context, token_file, "%s%swatch=1&resourceVersion=%s&timeoutSeconds=3"
                         % (path, sep, version), 15) as response:
                for line in response:
                    now = time.time()
                    event = json.loads(line)
                    if event["type"] == "ERROR":
                        version = None  # 410 Gone: list again
                        break
                    obj = event["object"]
                    version = obj["metadata"]["resourceVersion"]
                    if event["type"] != "BOOKMARK" and keep(obj):
                        out.write(dict(entry_of(obj, event["type"]), t=now))
        except (OSError, urllib.error.URLError, ValueError) as error:
            errors.append(str(error))
            print("rc_invariant: watch of %s: %s" % (path, error), file=sys.stderr)
            time.sleep(0.2)


def cri_handlers(cri_client, socket):
    try:
        out = subprocess.run([cri_client, "--socket", socket, "status"], capture_output=True,
                             text=True, timeout=5)
    except subprocess.TimeoutExpired:
        return None
    if out.returncode != 0:
        return None
    return [line.split("\t")[1] for line in out.stdout.splitlines() if line.startswith("handler\t")]


def poll_cri(cri_client, node, socket, out, stop_file):
    while not os.path.exists(stop_file):
        start = time.time()
        handlers = cri_handlers(cri_client, socket)
        out.write({"kind": "cri", "node": node, "start": start, "end": time.time(),
                   "handlers": handlers})
        time.sleep(0.02)  # a breath for the other processes of a 2-core test machine


def record(args):
    server, ca, token_file, name, out_path, stop_file, cri_client = args[:7]
    sockets = dict(pair.split("=", 1) for pair in args[7:])
    context = ssl.create_default_context(cafile=ca)
    out = Out(out_path)
    errors = []
    threads = [
        threading.Thread(target=watch, args=(
            server, context, token_file, "/apis/node.k8s.io/v1/runtimeclasses?fieldSelector=metadata.name%3D" + name,
            rc_entry, lambda obj: True, out, stop_file, errors)),
        threading.Thread(target=watch, args=(
            server, context, token_file, "/api/v1/nodes", node_entry,
            lambda obj: obj["metadata"]["name"] in sockets, out, stop_file, errors)),
    ]
    threads += [threading.Thread(target=poll_cri, args=(cri_client, node, socket, out, stop_file))
                for node, socket in sockets.items()]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def phase(args):
    out_path, name = args
    Out(out_path).write({"kind": "phase", "phase": name, "t": time.time()})


def selections(entries):
    """(node, handler, from, to, phase) for each stretch in which the RuntimeClass selected the
    node, in receipt times; and the handlers that left out a node labelled for the shim."""
    rc = None
    labels = {}
    open_ = {}
    out, excluded = [], set()
    current = ""
    events = sorted((e for e in entries if e["kind"] in ("rc", "node", "phase")),
                    key=lambda e: e["t"])
    last = max((e.get("end", e.get("t", 0)) for e in entries), default=0)

    def judge(t):
        for node, have in labels.items():
            selected = rc is not None and bool(rc["selector"]) and all(
                have.get(k) == v for k, v in rc["selector"].items())
            now = rc["handler"] if selected else None
            was = open_.get(node)
            if was and was[0] != now:
                out.append((node, was[0], was[1], t, was[2]))
                del open_[node]
            if now and node not in open_:
                open_[node] = (now, t, current)
            if rc is not None and not selected and any(
                    k in have for k in rc["selector"] if k.startswith(PREFIX)):
                excluded.add(rc["handler"])

    for e in events:
        if e["kind"] == "phase":
            current = e["phase"]
            continue
        if e["kind"] == "rc":
            rc = None if e["type"] == "DELETED" else e
        elif e["type"] == "DELETED":
            labels.pop(e["name"], None)
        else:
            labels[e["name"]] = e["labels"]
        judge(e["t"])
    for node, (handler, start, at) in open_.items():
        out.append((node, handler, start, last, at))
    return out, excluded


def check(args):
    out_path, rest = args[0], args[1:]
    seen_wanted, excluded_wanted = set(), set()
    max_unknown, end_margin = 0.05, 0.2
    while rest:
        flag, value, rest = rest[0], rest[1], rest[2:]
        if flag == "--seen":
            seen_wanted.add(value)
        elif flag == "--excluded":
            excluded_wanted.add(value)
        elif flag == "--max-unknown":
            max_unknown = float(value)
        elif flag == "--end-margin":
            end_margin = float(value)
        else:
            sys.exit("rc_invariant check: unknown flag " + flag)
    entries = [json.loads(line) for line in open(out_path)]
    cri = {}
    for e in entries:
        if e["kind"] == "cri":
            cri.setdefault(e["node"], []).append(e)
    stretches, excluded = selections(entries)
    violations, seen = [], set()
    unknown = judged = 0
    for node, handler, start, end, at in stretches:
        for answer in cri.get(node, []):
            if answer["start"] < start or answer["end"] > end - end_margin:
                continue
            judged += 1
            if answer["handlers"] is None:
                unknown += 1
            elif handler not in answer["handlers"]:
                violations.append("%.3f: RuntimeClass handler %s selects %s (since %.3f), whose CRI "
                                  "lacks it (serves %s)" % (answer["start"], handler, node, start,
                                                            ", ".join(answer["handlers"]) or "none"))
            else:
                seen.add("%s:%s" % (handler, node))
                seen.add("%s@%s:%s" % (at, handler, node))
    counts = {kind: sum(1 for e in entries if e["kind"] == kind) for kind in ("rc", "node", "cri")}
    print("recorded: %d RuntimeClass and %d Node events, %d CRI answers; %d selection stretches; "
          "%d answers judged, %d unknown (CRI not answering); selected-and-serving %s; handlers "
          "that left a labelled node out %s; violations %d"
          % (counts["rc"], counts["node"], counts["cri"], len(stretches), judged, unknown,
             sorted(p for p in seen if "@" not in p), sorted(excluded), len(violations)))
    for violation in violations[:10]:
        print("violation: " + violation)
    problems = []
    for kind, what in (("rc", "RuntimeClass event"), ("node", "Node event"), ("cri", "CRI answer")):
        if not counts[kind]:
            problems.append("no %s recorded" % what)
    if violations:
        problems.append("%d violation(s)" % len(violations))
    if judged and unknown > max_unknown * judged:
        problems.append("CRI did not answer %d of %d judged questions (more than %g)"
                        % (unknown, judged, max_unknown))
    for pair in sorted(seen_wanted - seen):
        problems.append("never saw %s (PHASE@HANDLER:NODE: the RuntimeClass's handler selecting a "
                        "node serving it)" % pair)
    for handler in sorted(excluded_wanted - excluded):
        problems.append("never saw RuntimeClass handler %s leave out a node labelled otherwise" % handler)
    if problems:
        sys.exit("rc_invariant: " + "; ".join(problems))


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("record", "check", "phase"):
        sys.exit(__doc__)
    {"record": record, "check": check, "phase": phase}[sys.argv[1]](sys.argv[2:])
