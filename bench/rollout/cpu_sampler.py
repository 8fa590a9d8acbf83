#!/usr/bin/env python3
"""Samples the whole machine's busy and idle CPU until killed.

    cpu_sampler.py OUT [INTERVAL_SECONDS]    (default 0.05)

Appends "SECONDS BUSY IDLE" lines to OUT: the wall clock (time.time(), the clock the API server's
record is stamped with) and /proc/stat's cumulative busy and idle ticks over all cores (idle with
iowait; steal left out). rollout_slots.py --cpu-samples reads them to say how long the cores
idled while a node waited for its slot.
"""
import sys
import time


def sample():
    with open("/proc/stat") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...
    return sum(fields[0:3]) + fields[5] + fields[6], fields[3] + fields[4]


def main(out_path, interval):
    with open(out_path, "a", buffering=1) as out:
        while True:
            busy, idle = sample()
            out.write("%.3f %d %d\n" % (time.time(), busy, idle))
            time.sleep(interval)


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: cpu_sampler.py OUT [INTERVAL_SECONDS]")
    main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) == 3 else 0.05)
