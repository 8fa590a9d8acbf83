#!/usr/bin/env python3
"""converge_profile_summary.py TRACE: reads one `strace -f -tt -T -s 200` trace of a shimkeeper
command and prints where its wall time went:

  landmarks  the first and last time (ms after the first line) of the steps a converge is made
             of: dynamic loading, reading the desired state, the download, the store, the
             pre-flight run of the shim, the config write, the D-Bus restart, the health calls;
  waits      the longest single syscalls (blocked on the network, the bus, a child, the disk);
  cpu gaps   the longest stretches between two syscalls of one process (time spent computing);
  totals     time per syscall name, summed over durations.

strace slows every syscall, so the figures are proportions, not absolute times.
"""
import collections
import re
import sys

LINE = re.compile(r"^(\d+)\s+(\d+):(\d+):(\d+\.\d+)\s+(.*)$")
CALL = re.compile(r"^(?:<\.\.\. )?(\w+)")
DURATION = re.compile(r"<(\d+\.\d+)>$")

# (label, syscall names or None for any, regex over the line); "(main process)" labels count
# only the traced command's own process, not its children.
LANDMARKS = [
    ("shared libraries loaded (main process)", {"openat"}, re.compile(r"\.so[.\d]*\"")),
    ("agent config and shims.d read", {"openat"}, re.compile(r"shimkeeper\.toml|shims\.d/")),
    ("containerd config read/written", {"openat", "rename", "renameat", "renameat2"},
     re.compile(r"etc/containerd/")),
    ("download (connect to 127.0.0.1)", {"connect"}, re.compile(r"127\.0\.0\.1")),
    ("store writes", {"openat", "mkdir", "mkdirat", "rename", "renameat", "renameat2"},
     re.compile(r"/store/sha256/.*(O_WRONLY|O_RDWR|O_CREAT|, 0[0-7]+\))|rename.*/store/sha256/")),
    ("state/journal writes", {"openat", "rename", "renameat", "renameat2"},
     re.compile(r"/state/.*(O_WRONLY|O_RDWR|O_CREAT)|rename.*/state/")),
    ("syncfs", {"syncfs"}, None),
    ("pre-flight / child exec", {"execve"}, re.compile(r"containerd-shim")),
    ("fsync", {"fsync", "fdatasync"}, None),
    ("D-Bus RestartUnit sent", None, re.compile(r"RestartUnit")),
    ("D-Bus JobRemoved received", None, re.compile(r"JobRemoved")),
    ("containerd socket calls", {"connect"}, re.compile(r"containerd\.sock")),
]


def parse(path):
    events = []
    pending = {}
    for raw in open(path, errors="replace"):
        m = LINE.match(raw.rstrip("\n"))
        if not m:
            continue
        pid, hh, mm, ss, rest = m.groups()
        t = int(hh) * 3600 + int(mm) * 60 + float(ss)
        if rest.startswith("+++") or rest.startswith("---"):
            events.append((t, pid, "(exit)", 0.0, rest))
            continue
        if rest.endswith("<unfinished ...>"):
            pending[pid] = rest
            continue
        name_m = CALL.match(rest)
        if not name_m:
            continue
        name = name_m.group(1)
        text = rest
        if rest.startswith("<..."):
            text = pending.pop(pid, "") + " " + rest
        d = DURATION.search(rest)
        events.append((t, pid, name, float(d.group(1)) if d else 0.0, text))
    return events


def main():
    if len(sys.argv) != 2:
        print("usage: converge_profile_summary.py TRACE", file=sys.stderr)
        return 2
    events = parse(sys.argv[1])
    if not events:
        print("no strace lines in " + sys.argv[1])
        return 1
    t0 = events[0][0]
    ms = lambda t: (t - t0) * 1000
    print(f"span: {ms(events[-1][0]):.1f} ms, {len(events)} syscalls, "
          f"{len({e[1] for e in events})} processes")

    print("\nlandmarks (ms after start: first .. last, count)")
    for label, names, pattern in LANDMARKS:
        hits = [e for e in events
                if (names is None or e[2] in names) and (pattern is None or pattern.search(e[4]))
                and (not label.endswith("(main process)") or e[1] == events[0][1])]
        if hits:
            print(f"  {label:36} {ms(hits[0][0]):8.1f} .. {ms(hits[-1][0] + hits[-1][3]):8.1f}"
                  f"  ({len(hits)})")

    print("\nlongest waits (single syscalls)")
    for t, pid, name, dur, text in sorted(events, key=lambda e: -e[3])[:12]:
        print(f"  {dur * 1000:8.1f} ms at {ms(t):8.1f}  [{pid}] {text[:110]}")

    print("\nlongest gaps between two syscalls of one process (computing, or not traced)")
    last = {}
    gaps = []
    for t, pid, name, dur, text in events:
        if pid in last:
            end, before = last[pid]
            gaps.append((t - end, end, pid, before, text))
        last[pid] = (t + dur, text)
    for gap, end, pid, before, after in sorted(gaps, key=lambda g: -g[0])[:12]:
        print(f"  {gap * 1000:8.1f} ms at {ms(end):8.1f}  [{pid}] after {before[:50]!r} "
              f"before {after[:50]!r}")

    print("\ntime per syscall (sum of durations, ms)")
    totals = collections.Counter()
    counts = collections.Counter()
    for _, _, name, dur, _ in events:
        totals[name] += dur * 1000
        counts[name] += 1
    for name, total in totals.most_common(15):
        print(f"  {name:20} {total:8.1f} ms  {counts[name]:6} calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
