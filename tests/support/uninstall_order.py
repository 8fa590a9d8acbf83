#!/usr/bin/env python3
"""Did one removal of a cluster shim take its label off before containerd dropped the handler?

    uninstall_order.py AGENT_LOG FROM_LINE NODE SHIM

Reads the agent's log (`shimkeeper run --log-level debug`) from line FROM_LINE (0-based: the
number of lines it had before the removal was asked for), so an earlier upgrade's or removal's
lines cannot stand in for this one's. The removal's own unlabel is the first patch of NODE that
sets the shim's label to null; its handler removal is the first containerd restart. Exit 0: the
unlabel came first; 1: it did not (the order is broken); 2: the recording lacks one of the two,
so it proves nothing (a test must treat that as a failure too, never as a pass).
"""
import sys


def main():
    log, start, node, shim = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    lines = open(log, errors="replace").read().splitlines()[start:]
    unlabel_text = '"shim.containerd.x-k8s.io/%s":null' % shim
    unlabels = [i for i, l in enumerate(lines) if "Node %s patched" % node in l and unlabel_text in l]
    restarts = [i for i, l in enumerate(lines) if "restarting containerd.service" in l]
    if not unlabels or not restarts:
        print("recording incomplete after line %d of %s: unlabel of %s at %s, restarts at %s"
              % (start, log, shim, unlabels, restarts))
        return 2
    if unlabels[0] > restarts[0]:
        print("%s restarted containerd without %s (log line %d) before taking the label off (line %d)"
              % (node, shim, start + restarts[0] + 1, start + unlabels[0] + 1))
        return 1
    print("%s took the %s label off (log line %d) before its restart (line %d)"
          % (node, shim, start + unlabels[0] + 1, start + restarts[0] + 1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
