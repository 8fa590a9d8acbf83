#!/usr/bin/env python3
"""API Priority and Fairness figures between two scrapes of the API server's /metrics.

    apf_figures.py BEFORE AFTER

One line per priority level that dispatched or rejected a request in between (shimkeeper's own
levels first): requests dispatched, rejected (by reason: queue-full, time-out, concurrency-limit,
cancelled), and how long the dispatched ones waited in their queues (mean, and the p99 and max as
the upper bounds of the histogram buckets they fell in), with the level's nominal seats.
"""
import collections
import re
import sys

SAMPLE = re.compile(r'^(\w+)\{([^}]*)\} (\S+)$')
LABEL = re.compile(r'(\w+)="([^"]*)"')
OURS = ("shimkeeper-election", "shimkeeper-coordinator", "shimkeeper-node")


def read(path):
    """{(metric, frozenset of labels): value} of the apiserver_flowcontrol_* samples."""
    samples = {}
    for line in open(path):
        m = SAMPLE.match(line.strip())
        if m and m.group(1).startswith("apiserver_flowcontrol_"):
            labels = frozenset(LABEL.findall(m.group(2)))
            samples[(m.group(1), labels)] = float(m.group(3))
    return samples


def main(before_path, after_path):
    before, after = read(before_path), read(after_path)
    dispatched = collections.Counter()
    rejected = collections.defaultdict(collections.Counter)
    wait_sum, wait_count = collections.Counter(), collections.Counter()
    buckets = collections.defaultdict(collections.Counter)  # level -> le -> count
    seats = {}
    for (metric, labels), value in after.items():
        d = dict(labels)
        level = d.get("priority_level")
        if level is None or level == "exempt":  # the bench's own admin requests; never queued
            continue
        delta = value - before.get((metric, labels), 0.0)
        if metric == "apiserver_flowcontrol_dispatched_requests_total":
            dispatched[level] += delta
        elif metric == "apiserver_flowcontrol_rejected_requests_total":
            rejected[level][d.get("reason", "?")] += delta
        elif metric == "apiserver_flowcontrol_nominal_limit_seats":
            seats[level] = int(value)
        elif d.get("execute") == "true":  # the waits of requests that ran, not of those rejected
            if metric == "apiserver_flowcontrol_request_wait_duration_seconds_sum":
                wait_sum[level] += delta
            elif metric == "apiserver_flowcontrol_request_wait_duration_seconds_count":
                wait_count[level] += delta
            elif metric == "apiserver_flowcontrol_request_wait_duration_seconds_bucket":
                buckets[level][float(d["le"])] += delta
    levels = [lv for lv in OURS if lv in seats] + sorted(
        lv for lv in set(dispatched) | set(rejected)
        if lv not in OURS and (dispatched[lv] > 0 or sum(rejected[lv].values()) > 0))
    for level in levels:
        count = wait_count[level]
        cumulative = sorted(buckets[level].items())

        def bound(fraction):
            for le, n in cumulative:
                if n >= fraction * count:
                    return "<= %g s" % le
            return "-"

        refused = {r: int(n) for r, n in rejected[level].items() if n > 0}
        print("APF level %-22s (%d seats): dispatched %d, rejected %d%s; queue wait mean %.3f s, "
              "p99 %s, max %s" % (
                  level, seats.get(level, 0), dispatched[level], sum(refused.values()),
                  " (%s)" % ", ".join("%s %d" % kv for kv in sorted(refused.items())) if refused else "",
                  wait_sum[level] / count if count else 0.0,
                  bound(0.99) if count else "-", bound(1.0) if count else "-"))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: apf_figures.py BEFORE AFTER (two scrapes of the API server's /metrics)")
    main(sys.argv[1], sys.argv[2])
