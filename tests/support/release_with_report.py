#!/usr/bin/env python3
"""Checks that each node released its rollout slot in the same write as its report of the
outcome, from the API server's record of the Nodes (tests/support/kube_rollout.sh's recorder).

For Shim SHIM at GENERATION, each node's first Node event whose held_<SHIM> entry says done is
its release. That event must also change the node's state annotation for SHIM (the report came
with it), and no later event of that node may change it again while the annotation is at
GENERATION (the report did not follow on its own). A record in which no node released proves
nothing and fails.

  release_with_report.py NODE_EVENTS SHIM GENERATION
"""

import json
import sys

from rollout_timeline import events  # the recorder's concatenated JSON events (beside this file)

KEY = "shim.containerd.x-k8s.io/"


def main(node_file, shim, generation):
    state_key, hold_key = KEY + shim, KEY + "held_" + shim
    last_state = {}  # node -> its state annotation in the last event seen
    released = {}  # node -> whether its release came with a change of the state annotation
    late = []  # nodes whose state changed again after the release, at GENERATION
    ordered = sorted(events(node_file), key=lambda e: int(e["object"]["metadata"]["resourceVersion"]))
    for event in ordered:
        meta = event["object"]["metadata"]
        node, notes = meta["name"], meta.get("annotations") or {}
        state = notes.get(state_key)
        try:
            hold = json.loads(notes.get(hold_key, "{}"))
        except json.JSONDecodeError:
            hold = {}
        previous = last_state.get(node)
        last_state[node] = state
        if node in released:
            at_generation = state is not None and json.loads(state).get("generation") == generation
            if state != previous and at_generation and node not in late:
                late.append(node)
            continue
        if hold.get("done") and hold.get("generation") == generation:
            released[node] = state != previous
    alone = sorted(n for n, with_report in released.items() if not with_report)
    print("releases of %s generation %d: %d, with the report in the same write: %d"
          % (shim, generation, len(released), len(released) - len(alone)))
    if alone:
        print("released without a report in the same write (%d): %s" % (len(alone), " ".join(alone[:10])))
    if late:
        print("state changed again after the release (%d): %s" % (len(late), " ".join(sorted(late)[:10])))
    return 0 if released and not alone and not late else 1


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: release_with_report.py NODE_EVENTS SHIM GENERATION")
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
