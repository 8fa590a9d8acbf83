#!/usr/bin/env python3
"""Whether a slot was taken after a rollout halted: the halt halts.

    slots_after.py LEASE_EVENTS FAILED_RV [SHIM]

LEASE_EVENTS is watch_record.py's record of the slot Leases (one JSON watch event after another);
FAILED_RV the resourceVersion at which a slot was marked failed. A slot Lease created after it,
or modified after it into an unfailed one with another holder or acquireTime than the record's
version before (a takeover; a renewal or a holder's committing mark keeps both), is a slot taken
after the failure; with SHIM, only that Shim's slots count (another Shim's rollout goes on).
Prints them ("slots taken after the failure: ..."); exits 1 if there is one, and 2 if the record
holds no slot event at all (a dead recorder would otherwise prove the halt).
"""
import sys

from rollout_timeline import events  # the recorder's stream of watch events


def main():
    path, failed_rv = sys.argv[1], int(sys.argv[2])
    prefix = sys.argv[3] + "-slot-" if len(sys.argv) > 3 else None
    after, seen = [], 0
    taken = {}  # name -> (holder, acquireTime) of the version seen last
    for event in events(path):
        lease = event["object"]
        meta = lease["metadata"]
        if "-slot-" not in meta["name"] or (prefix and not meta["name"].startswith(prefix)):
            continue
        seen += 1
        holder = lease["spec"].get("holderIdentity", "")
        was = taken.get(meta["name"])
        taken[meta["name"]] = (holder, lease["spec"].get("acquireTime", ""))
        if int(meta["resourceVersion"]) <= failed_rv:
            continue
        failed = meta.get("annotations", {}).get("shim.containerd.x-k8s.io/failed")
        if event["type"] == "ADDED":
            after.append(holder)
        elif event["type"] == "MODIFIED" and not failed and was != taken[meta["name"]]:
            after.append(holder + " (takeover)")
    if not seen:
        print("no slot event recorded: the record proves nothing")
        sys.exit(2)
    print("slots taken after the failure:", ", ".join(after) if after else "none")
    sys.exit(1 if after else 0)


if __name__ == "__main__":
    main()
