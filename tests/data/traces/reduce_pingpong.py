#!/usr/bin/env python3
"""Reduce pingpong.c's batches (one or more CSV files) to one row per size, the fastest batch (the
one least disturbed by the other jobs of a shared machine), as parsim fit-comm's CSV on stdout:
every ping-pong size under three primitive names, one per range fitted:
  eager  1 B .. 3 KiB   (below Open MPI's shared-memory eager limit, 4096 B with the header)
  app    1 B .. 16 KiB  (the sizes NPB CG and MG class S send)
  all    1 B .. 1 MiB
and the fastest send_call and stream batches (o and g) on stderr."""
import collections, csv, sys
d = collections.defaultdict(list)
for f in sys.argv[1:]:
    for r in csv.DictReader(open(f)):
        d[(r["primitive"], int(r["bytes"]))].append(float(r["time"]))
print("primitive,ranks,bytes,time")
for name, top in (("eager", 3072), ("app", 16384), ("all", 1 << 20)):
    for (p, m), v in sorted(d.items()):
        if p == "pingpong" and m <= top:
            print(f"{name},2,{m},{min(v):.6e}")
for (p, m), v in sorted(d.items()):
    if p != "pingpong":
        print(f"{p}: fastest of {len(v)} batches {min(v):.4e} s", file=sys.stderr)
