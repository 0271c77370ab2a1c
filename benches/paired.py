#!/usr/bin/env python3
"""Times whole commands, as the figures in benches/RESULTS.md and the guide were taken.

    python3 benches/paired.py [-n RUNS] [--warmup W] [--vs 'COMMAND_B'] -- COMMAND_A [ARG ...]

Runs COMMAND_A (and COMMAND_B, in turn: A B A B ...) RUNS times after W runs not counted, and
prints the min, median and max of each one's user, system and CPU (user + system) seconds, its
wall seconds and its peak resident memory, then the ratios A/B taken pair by pair (pairing keeps
a ratio meaningful on a machine whose speed drifts). Quote the median; the spread says how
noisy the machine was. The commands' output is thrown away; each is split as a shell splits
words and started without a shell.

CPU times and peak memory are the kernel's accounting of the reaped child (wait4), wall time a
monotonic clock around it. Standard library only.
"""

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time


def once(argv):
    """One run of `argv`: (user s, sys s, wall s, peak MiB, exit status)."""
    start = time.monotonic()
    child = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.monotonic() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    # ru_maxrss is in KiB on Linux
    return usage.ru_utime, usage.ru_stime, wall, usage.ru_maxrss / 1024, child.returncode


def row(name, values):
    """A line of min, median and max."""
    return f"{name:<14}{min(values):>12.4g}{statistics.median(values):>12.4g}{max(values):>12.4g}"


def main():
    parser = argparse.ArgumentParser(
        description="Times whole commands, paired A B A B when --vs is given.",
        usage="%(prog)s [-n RUNS] [--warmup W] [--vs 'COMMAND_B'] -- COMMAND_A [ARG ...]",
    )
    parser.add_argument("-n", type=int, default=5, help="runs counted for each command (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="runs not counted (default 1)")
    parser.add_argument("--vs", help="the baseline command B, one string split as a shell splits it")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND_A [ARG ...]")
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command or args.n < 1 or args.warmup < 0:
        parser.error("give RUNS >= 1, WARMUP >= 0 and a command after --")
    commands = {"A": command}
    if args.vs:
        commands["B"] = shlex.split(args.vs)
    for name, argv in commands.items():
        print(f"{name} = {shlex.join(argv)}")
    runs = {name: [] for name in commands}
    for i in range(args.warmup + args.n):
        for name, argv in commands.items():
            try:
                result = once(argv)
            except OSError as e:
                print(f"paired.py: cannot start {name} ({argv[0]}): {e}", file=sys.stderr)
                sys.exit(2)
            if i >= args.warmup:
                runs[name].append(result)
    print(f"{'':<14}{'min':>12}{'median':>12}{'max':>12}   ({args.n} runs each)")
    for name, rs in runs.items():
        failed = sum(1 for r in rs if r[4] != 0)
        if failed:
            print(f"{name}: {failed} of {len(rs)} runs exited non-zero")
        print(row(f"{name} user s", [r[0] for r in rs]))
        print(row(f"{name} sys s", [r[1] for r in rs]))
        print(row(f"{name} cpu s", [r[0] + r[1] for r in rs]))
        print(row(f"{name} wall s", [r[2] for r in rs]))
        print(row(f"{name} peak MiB", [r[3] for r in rs]))
    if "B" in runs:
        pairs = list(zip(runs["A"], runs["B"]))
        print(row("A/B cpu", [(a[0] + a[1]) / (b[0] + b[1]) for a, b in pairs]))
        print(row("A/B wall", [a[2] / b[2] for a, b in pairs]))


if __name__ == "__main__":
    main()
