#!/usr/bin/env python3
"""Checks that each node said `installing` and marked its rollout slot committing in one write,
from the API server's record of the Nodes (tests/support/kube_rollout.sh's recorder).

For Shim SHIM at GENERATION, a node's committing mark is the first Node event in which its
held_<SHIM> entry for GENERATION carries `committing`; its `installing` is the first event in
which its state annotation for SHIM says installing at GENERATION. Both must be the same event
(the report before the change carried the mark), and every node that marked a slot must have said
`installing`. A record in which no node marked a slot proves nothing and fails.

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
    for event in events(node_file):
        meta = event["object"]["metadata"]
        node, notes, version = meta["name"], meta.get("annotations") or {}, int(meta["resourceVersion"])
        hold, state = parsed(notes.get(hold_key)), parsed(notes.get(state_key))
        if hold.get("generation") == generation and hold.get("committing"):
            marked[node] = min(version, marked.get(node, version))
        if state.get("generation") == generation and state.get("state") == "installing":
            installing[node] = min(version, installing.get(node, version))
    apart = sorted(n for n in marked if installing.get(n) != marked[n])
    print("committing marks of %s generation %d: %d, in the same write as installing: %d"
          % (shim, generation, len(marked), len(marked) - len(apart)))
    if apart:
        print("marked apart from installing (%d): %s" % (len(apart), " ".join(
            "%s(mark %s, installing %s)" % (n, marked[n], installing.get(n, "never")) for n in apart[:10])))
    return 0 if marked and not apart else 1


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: committing_with_report.py NODE_EVENTS SHIM GENERATION")
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
