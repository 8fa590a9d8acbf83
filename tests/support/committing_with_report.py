#!/usr/bin/env python3
"""Checks that each node said `installing` and marked its rollout slot committing in one write,
and that its take of the slot went in that write too, from the API server's record of the Nodes
(tests/support/kube_rollout.sh's recorder).

For Shim SHIM at GENERATION, a node's committing mark is the first Node event in which its
held_<SHIM> entry for GENERATION carries `committing`; its `installing` is the first event in
which its state annotation for SHIM says installing at GENERATION; its take is the first event in
which that entry names the grant it went on to mark. Mark and `installing` must be the same event
(the report before the change carried the mark), and every node that marked a slot must have said
`installing`. The take goes with them unless the transaction took longer than a renewal period
(5 s) from the grant to its first change, when a renewal round takes it first: at least half the
takes must be in the `installing` write (a take written when the grant came is never). A record in
which no node marked a slot proves nothing and fails.

  committing_with_report.py NODE_EVENTS SHIM GENERATION
"""

import json
import sys

from rollout_timeline import events  # the recorder's concatenated JSON events (beside this file)

KEY = "shim.containerd.x-k8s.io/"


def parsed(text):
    try:
        return json.loads(text) if text else {}
    except json.JSONDecodeError:
        return {}


def main(node_file, shim, generation):
    state_key, hold_key = KEY + shim, KEY + "held_" + shim
    marked, installing = {}, {}  # node -> resourceVersion of the first such event
    taken = {}  # (node, grant) -> resourceVersion of the first event naming it
    marked_grant = {}  # node -> the grant its first mark names
    for event in events(node_file):
        meta = event["object"]["metadata"]
        node, notes, version = meta["name"], meta.get("annotations") or {}, int(meta["resourceVersion"])
        hold, state = parsed(notes.get(hold_key)), parsed(notes.get(state_key))
        if hold.get("generation") == generation and hold.get("grant"):
            key = (node, hold["grant"])
            taken[key] = min(version, taken.get(key, version))
        if hold.get("generation") == generation and hold.get("committing"):
            if node not in marked or version < marked[node]:
                marked_grant[node] = hold.get("grant")
            marked[node] = min(version, marked.get(node, version))
        if state.get("generation") == generation and state.get("state") == "installing":
            installing[node] = min(version, installing.get(node, version))
    apart = sorted(n for n in marked if installing.get(n) != marked[n])
    print("committing marks of %s generation %d: %d, in the same write as installing: %d"
          % (shim, generation, len(marked), len(marked) - len(apart)))
    if apart:
        print("marked apart from installing (%d): %s" % (len(apart), " ".join(
            "%s(mark %s, installing %s)" % (n, marked[n], installing.get(n, "never")) for n in apart[:10])))
    takes_apart = sorted(n for n in marked if taken.get((n, marked_grant[n])) != installing.get(n))
    print("takes of the grants marked: %d, in the same write as installing: %d"
          % (len(marked), len(marked) - len(takes_apart)))
    if takes_apart:
        print("taken before installing (%d): %s" % (len(takes_apart), " ".join(
            "%s(take %s, installing %s)" % (n, taken.get((n, marked_grant[n])), installing.get(n, "never"))
            for n in takes_apart[:10])))
    takes_joined = 2 * len(takes_apart) <= len(marked)
    return 0 if marked and not apart and takes_joined else 1


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: committing_with_report.py NODE_EVENTS SHIM GENERATION")
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
