#!/usr/bin/env python3
"""converge_timeit.py OUT_FILE CMD...: runs CMD once and prints one line,
"<wall ms> <user ms> <sys ms> <exit code>", with CMD's stdout and stderr in OUT_FILE.

Why not /usr/bin/time: GNU time prints CPU time in hundredths of a second, too coarse for a
20 ms goal. wait4() returns the child's rusage in microseconds, including every process the
child itself waited for (shimkeeper's pre-flight run of a shim, for instance). The wall time
spans spawn to reap, so it holds the command's own start-up and nothing of Python's.
"""
import os
import sys
import time


def main() -> int:
    if len(sys.argv) < 3:
        print("usage: converge_timeit.py OUT_FILE CMD...", file=sys.stderr)
        return 2
    out_file, command = sys.argv[1], sys.argv[2:]
    out_fd = os.open(out_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    actions = [
        (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, out_fd, 1),
        (os.POSIX_SPAWN_DUP2, out_fd, 2),
    ]
    start = time.perf_counter_ns()
    pid = os.posix_spawnp(command[0], command, os.environ, file_actions=actions)
    _, status, usage = os.wait4(pid, 0)
    wall_ns = time.perf_counter_ns() - start
    os.close(out_fd)
    code = os.waitstatus_to_exitcode(status)
    print(f"{wall_ns / 1e6:.2f} {usage.ru_utime * 1e3:.2f} {usage.ru_stime * 1e3:.2f} {code}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
