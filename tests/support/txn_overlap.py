#!/usr/bin/env python3
"""How many nodes were past their point of no return at once, counted from the transactions
themselves, not from Lease holders (a node can believe it holds a slot the API server gave away).

Each agent runs with SHIMKEEPER_FAULT_RUN='*:echo "NODE $SHIMKEEPER_FAULT_STEP $(date +%s.%N)"
>>STEPS' (tests/support/kube_rollout.sh: rollout_step_recorder), so STEPS has a line per step a
transaction reached. A node is past its point of no return from its `links` step (the first
change: links switched, then the config written) until its `commit` step; a transaction that
never commits (rolled back, killed) stays past it until the end of the record, which can only
make the count higher.

  txn_overlap.py STEPS LIMIT NODE...

Prints "transactions N" and "max_past_point M"; exits 1 when the record is empty, a NODE never
passed its point of no return (the record does not cover the rollout), or M exceeds LIMIT."""
import sys


def main():
    path, limit, nodes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    marks = []  # (time, +1 enter / -1 leave, node)
    open_since = {}
    entered = {}
    for line in open(path):
        parts = line.split()
        if len(parts) != 3:
            continue
        node, step, when = parts[0], parts[1], float(parts[2])
        if step == "links":
            open_since[node] = when
            entered[node] = entered.get(node, 0) + 1
        elif step == "commit" and node in open_since:
            marks.append((open_since.pop(node), 1, node))
            marks.append((when, -1, node))
    for node, since in open_since.items():
        marks.append((since, 1, node))  # never left: past the point to the end
    marks.sort(key=lambda m: (m[0], -m[1]))  # an enter and a leave at once count as overlapping
    now, peak, peak_at = set(), 0, 0.0
    for when, delta, node in marks:
        if delta > 0:
            now.add(node)
            if len(now) > peak:
                peak, peak_at = len(now), when
        else:
            now.discard(node)
    print("transactions %d" % sum(entered.values()))
    print("max_past_point %d%s" % (peak, " (at %.3f)" % peak_at if peak else ""))
    problems = []
    if not marks:
        problems.append("the record %s is empty: nothing was recorded, nothing was proven" % path)
    missing = [n for n in nodes if n not in entered]
    if missing:
        problems.append("never past the point of no return: " + " ".join(missing))
    if peak > limit:
        problems.append("%d nodes were past their point of no return at once (limit %d)" % (peak, limit))
    for problem in problems:
        print("  " + problem)
    sys.exit(1 if problems else 0)


if __name__ == "__main__":
    main()
