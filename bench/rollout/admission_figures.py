#!/usr/bin/env python3
"""The ValidatingAdmissionPolicies' share of the control plane's work, between two scrapes of the
API server's /metrics.

    admission_figures.py BEFORE AFTER CONTROL_CPU_SECONDS AGENTS [BASELINE_PER_NODE]

- The ValidatingAdmissionPolicy admission plugin's time (apiserver_admission_controller_
  admission_duration_seconds{name="ValidatingAdmissionPolicy"}): every policy's match conditions
  and validations on each request, by operation, in all and per node, and as a share of
  kube-apiserver's and etcd's CPU over the same window (CONTROL_CPU_SECONDS). It is timed on the
  wall clock on the API server's request goroutines, so on a busy machine the share is an upper
  bound of its CPU.
- Each policy's match conditions (apiserver_admission_match_condition_evaluation_seconds).
- apiserver_validating_admission_policy_check_duration_seconds, by policy: this API server
  (1.36) observes a check there only when it refuses or fails to evaluate, never when it admits,
  so it counts the refusals' cost, not the policies' (the plugin's time above does).
- The control plane's CPU per node against BASELINE_PER_NODE, the starting revision's figure
  measured by the same bench on this machine (baseline.sh), when one was measured.
"""
import collections
import re
import sys

SAMPLE = re.compile(r'^(\w+)\{([^}]*)\} (\S+)$')
LABEL = re.compile(r'(\w+)="([^"]*)"')
PLUGIN = "apiserver_admission_controller_admission_duration_seconds"
MATCH = "apiserver_admission_match_condition_evaluation_seconds"
CHECK = "apiserver_validating_admission_policy_check_duration_seconds"


def read(path):
    """{(histogram, key): [seconds, observations]}: the plugin's by operation, the match
    conditions' and the checks' by policy."""
    sums = collections.defaultdict(lambda: [0.0, 0.0])
    for line in open(path):
        m = SAMPLE.match(line.strip())
        if not m:
            continue
        metric, labels = m.group(1), dict(LABEL.findall(m.group(2)))
        base, _, part = metric.rpartition("_")
        if part not in ("sum", "count"):
            continue
        if base == PLUGIN and labels.get("name") == "ValidatingAdmissionPolicy":
            key = (PLUGIN, labels.get("operation", "?"))
        elif base == MATCH and labels.get("kind") == "policy":
            key = (MATCH, labels.get("name", "?"))
        elif base == CHECK:
            key = (CHECK, labels.get("policy", "?"))
        else:
            continue
        sums[key][part == "count"] += float(m.group(3))
    return sums


def deltas(before, after, histogram):
    out = {}
    for (name, key), (seconds, count) in after.items():
        if name == histogram:
            was = before.get((name, key), [0.0, 0.0])
            if count - was[1] > 0:
                out[key] = (seconds - was[0], count - was[1])
    return out


def main(before_path, after_path, control, agents, baseline=None):
    before, after = read(before_path), read(after_path)
    plugin = deltas(before, after, PLUGIN)
    seconds = sum(s for s, _ in plugin.values())
    print("admission policies during the rollout: the ValidatingAdmissionPolicy plugin %.2f s over %d "
          "requests (%s; %.4f s per node), %.1f%% of kube-apiserver and etcd's %.1f s of CPU" % (
              seconds, sum(n for _, n in plugin.values()),
              ", ".join("%s %.2f s" % (op, s) for op, (s, _) in sorted(plugin.items())) or "none",
              seconds / agents, 100 * seconds / control if control else 0.0, control))
    for policy, (s, n) in sorted(deltas(before, after, MATCH).items(), key=lambda kv: -kv[1][0]):
        print("  match conditions of %-34s %6d evaluations %7.3f s" % (policy, n, s))
    checks = deltas(before, after, CHECK)
    print("  checks observed (refusals and evaluation errors only): %s" % (
        ", ".join("%s %d (%.3f s)" % (p, n, s) for p, (s, n) in sorted(checks.items())) or "none"))
    if baseline is not None:
        now = control / agents
        print("control plane CPU per node per rollout: %.4f s against the starting revision's %.4f s "
              "in this run: %.2f of it (goal <= 0.50)" % (now, baseline, now / baseline))


if __name__ == "__main__":
    if len(sys.argv) not in (5, 6):
        sys.exit("usage: admission_figures.py BEFORE AFTER CONTROL_CPU_SECONDS AGENTS [BASELINE_PER_NODE]")
    main(sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]),
         float(sys.argv[5]) if len(sys.argv) == 6 and sys.argv[5] else None)
