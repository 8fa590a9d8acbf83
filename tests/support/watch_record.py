#!/usr/bin/env python3
"""Records a Kubernetes watch, one JSON event per line, resuming where it stopped when the API
server ends it (kubectl get -w just exits: the server ends a watch whose reader falls behind, and
every watch after its timeout). A 410 Gone restarts from a fresh list and says so on stderr.

    watch_record.py KUBECTL KUBECONFIG API-PATH EVENTS-FILE [STAMPED-FILE]

STAMPED-FILE: a line per event, "SEEN TYPE|NAME|HOLDER|GENERATION|FAILED|GRANT", SEEN being when
this machine read it (seconds since the epoch), for timings the objects do not carry; the last
four are a slot Lease's (empty for other objects; GRANT its grant id, which a hand-over changes),
and line i stamps line i of EVENTS-FILE."""
import json
import os
import signal
import subprocess
import sys
import time

from rollout_timeline import grant_id

PREFIX = "shim.containerd.x-k8s.io/"


def stamp(seen, event):
    obj = event["object"]
    meta = obj.get("metadata", {})
    notes = meta.get("annotations") or {}
    fields = [event["type"], meta.get("name", ""), (obj.get("spec") or {}).get("holderIdentity") or "",
              notes.get(PREFIX + "generation", ""), notes.get(PREFIX + "failed", "").replace("\n", " ")]
    if "-slot-" in fields[1]:
        fields.append(grant_id(obj))
    return "%.3f %s\n" % (seen, "|".join(fields))


def main():
    kubectl, kubeconfig, path, events_path = sys.argv[1:5]
    stamped = open(sys.argv[5], "a") if len(sys.argv) > 5 else None
    version = ""
    child = None

    def stop(*_):
        # At once, not by SystemExit: a handler runs wherever the interpreter is, a finalizer
        # too (a replaced Popen's __del__), which swallows an exception and leaves the recorder
        # running and the test's cleanup waiting for it (seen once). Every event is flushed.
        if child:
            child.kill()
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    with open(events_path, "a") as events:
        while True:
            query = "?watch=true&allowWatchBookmarks=true"
            if version:
                query += "&resourceVersion=" + version
            child = subprocess.Popen([kubectl, "--kubeconfig", kubeconfig, "get", "--raw", path + query],
                                     stdout=subprocess.PIPE, text=True)
            for line in child.stdout:
                seen = time.time()
                event = json.loads(line)
                if event["type"] == "ERROR":
                    print("watch_record: %s: %s; listing again" % (path, event["object"].get("message")),
                          file=sys.stderr)
                    version = ""
                    break
                version = event["object"]["metadata"]["resourceVersion"]
                if event["type"] == "BOOKMARK":
                    continue
                events.write(line)
                events.flush()
                if stamped:
                    stamped.write(stamp(seen, event))
                    stamped.flush()
            child.kill()
            child.wait()
            time.sleep(0.1)


main()
