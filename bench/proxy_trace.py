#!/usr/bin/env python3
"""Reads the staging proxy's traces (HETCCL_PROXY_TRACE=PREFIX writes
PREFIX.RANK per GPU rank of the staged engine when the communicator goes)
and says where each direction of the links stood idle.

    HETCCL_PROXY_TRACE=/tmp/trace hetccl-perf -np 2 -D 0,1 -x allreduce -b 64M -e 64M ...
    bench/proxy_trace.py /tmp/trace.0 [--last N] [--gap US] [--pieces CALL:N]

Per file: for the last N calls (default 10), each direction's pieces, how
much of the span some piece of that direction was posted on the link and
not yet done, and the gaps of at least --gap microseconds between such
periods, inside a call or between two. A send is done once the link took
its bytes (a socket's buffer may still hold them); a receive is posted as
soon as its slot is free, so receives show where data arrived rather than
where the link was busy. --pieces lists one call's pieces: when each was
handed over, posted and done, from the call's first piece.
"""
import argparse
import collections
import sys

Piece = collections.namedtuple(
    "Piece", "way number bytes call sequence adopted posted done")


def read_trace(path):
    pieces = []
    with open(path) as trace:
        for line in trace:
            if line.startswith("#") or not line.strip():
                continue
            way, number, size, call, sequence, adopted, posted, done = line.split()
            pieces.append(Piece(way, int(number), int(size), call, int(sequence),
                                int(adopted), int(posted), int(done)))
    return pieces


def call_of(piece):
    """The operation a piece belongs to: "AllReduce:3"; sends and receives
    are numbered per pair and direction, so a send and the receive of the
    same number (a send/recv exchange) are one "SendRecv:N"."""
    kind = "SendRecv" if piece.call in ("Send", "Recv") else piece.call
    return f"{kind}:{piece.sequence}"


def calls_of(pieces):
    """The calls in the order their first piece was handed over."""
    first = {}
    for piece in pieces:
        key = call_of(piece)
        first[key] = min(first.get(key, piece.adopted), piece.adopted)
    return sorted(first, key=first.get)


def bytes_per_call(pieces):
    """{call: {"send": bytes, "recv": bytes}}."""
    totals = collections.defaultdict(lambda: {"send": 0, "recv": 0})
    for piece in pieces:
        totals[call_of(piece)][piece.way] += piece.bytes
    return totals


def busy_periods(pieces):
    """The periods some piece was posted and not done, with the call that
    opened and the one that closed each."""
    periods = []
    for piece in sorted(pieces, key=lambda p: p.posted):
        key = call_of(piece)
        if periods and piece.posted <= periods[-1][1]:
            if piece.done > periods[-1][1]:
                periods[-1][1], periods[-1][3] = piece.done, key
        else:
            periods.append([piece.posted, piece.done, key, key])
    return periods


def summarize(path, last, gap):
    pieces = read_trace(path)
    calls = set(calls_of(pieces)[-last:])
    pieces = [p for p in pieces if call_of(p) in calls]
    if not pieces:
        print(f"{path}: no pieces")
        return
    start = min(p.posted for p in pieces)
    span = max(p.done for p in pieces) - start
    print(f"{path}: {len(calls)} calls, {span} us, {span / len(calls):.0f} us per call")
    for way in ("send", "recv"):
        mine = [p for p in pieces if p.way == way]
        if not mine:
            continue
        periods = busy_periods(mine)
        busy = sum(end - begin for begin, end, _, _ in periods)
        gaps = [(later[0] - earlier[1], earlier[3] == later[2])
                for earlier, later in zip(periods, periods[1:])
                if later[0] - earlier[1] >= gap]
        inside = sum(g for g, same in gaps if same)
        between = sum(g for g, same in gaps if not same)
        sizes = sorted({p.bytes for p in mine})
        print(f"  {way}: {len(mine)} pieces of {sizes[0]}-{sizes[-1]} bytes; "
              f"posted and not done {busy} us ({100 * busy / max(span, 1):.0f} %); "
              f"{len(gaps)} gaps of {gap} us or more: {inside} us inside calls, "
              f"{between} us between calls")


def list_pieces(path, call):
    pieces = [p for p in read_trace(path) if call_of(p) == call]
    if not pieces:
        print(f"{path}: no call {call}")
        return
    origin = min(p.posted for p in pieces)
    print(f"{path}: {call}, times in us from its first piece posted")
    for p in sorted(pieces, key=lambda p: (p.way, p.number)):
        print(f"  {p.way} {p.number:6d} {p.bytes:9d} bytes  handed over "
              f"{p.adopted - origin:8d}  posted {p.posted - origin:8d}  "
              f"done {p.done - origin:8d}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("traces", nargs="+")
    parser.add_argument("--last", type=int, default=10,
                        help="the last N calls (default 10)")
    parser.add_argument("--gap", type=int, default=20,
                        help="the shortest gap listed, us (default 20)")
    parser.add_argument("--pieces", metavar="CALL:N",
                        help="list the pieces of one call (AllReduce:3, "
                        "SendRecv:2)")
    args = parser.parse_args()
    for path in args.traces:
        if args.pieces is not None:
            list_pieces(path, args.pieces)
        else:
            summarize(path, args.last, args.gap)
    return 0


if __name__ == "__main__":
    sys.exit(main())
