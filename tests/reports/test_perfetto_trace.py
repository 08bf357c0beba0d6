#!/usr/bin/env python3
"""`ddpscope report RUN.db --trace F.pftrace`: Perfetto's protobuf trace,
decoded by Google's `protobuf` package from a schema declared in
perfetto_schema.py (nothing of ddpscope's encoder), then replayed as
Perfetto's trace processor does: interned strings resolved on their packet
sequence, BEGIN/END events sorted by timestamp (file order on a tie) and paired
per track, each END closing the innermost open slice.

The run is the renderer tests' sample run (tests/reports/fixtures.h, written
by make_sample_run), plus rows added here that a naive writer gets wrong:
nested NVTX ranges with equal starts and ends, a zero-length range, two ranges
that overlap without nesting, a range that never ended, back-to-back kernels,
and names that are not ASCII or not UTF-8. Every slice the database holds
must come back with its track, name and exact nanosecond times, and with the
same category and args as in the JSON trace of the same run.
"""
import collections
import decimal
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import unittest
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
import perfetto_schema as pb  # noqa: E402
from ctest_unittest import main  # noqa: E402

DDPSCOPE = os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope"))
SAMPLE_RUN = os.environ.get("SAMPLE_RUN_BIN", os.path.join(ROOT, "build", "make_sample_run"))
EXTRA = 20000  # more collectives on rank 1: the trace spans several deflated chunks
BEGIN = pb.TrackEvent.TYPE_SLICE_BEGIN
END = pb.TrackEvent.TYPE_SLICE_END
U64 = (1 << 64) - 1


def make_run(directory, extra):
    out = subprocess.run([SAMPLE_RUN, directory, str(extra)], capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


def add_awkward_rows(db_path):
    """Rows on rank 0's thread 42 (domain "train") and stream 0x10, on the
    wall timeline of the merged run, after the sample run's own events."""
    t = 1_700_000_000_000_600_000
    ranges = [("iteration", 0, 50_000), ("forward", 0, 10_000),  # same start
              ("backward", 10_000, 50_000),  # starts as forward ends, ends with iteration
              ("mark", 20_000, 20_000),  # zero length, inside backward
              ("load", 60_000, 80_000), ("prefetch", 70_000, 90_000),  # overlap, no nesting
              ("h\u00f6he", 100_000, 110_000)]
    db = sqlite3.connect(db_path)
    # In the order the capture stores them: when they end, inner ranges first.
    for name, start, end in sorted(ranges, key=lambda r: (r[2], -r[1])):
        db.execute("INSERT INTO ranges VALUES (0, 42, 'train', ?, ?, ?)", (name, t + start, t + end))
    db.execute("INSERT INTO ranges VALUES (0, 42, 'train', 'unfinished', ?, NULL)", (t + 120_000,))
    kernels = [("k_first", 200_000, 201_000), ("k_second", 201_000, 202_000)]  # back to back
    for i, (name, start, end) in enumerate(kernels):
        db.execute("INSERT INTO kernels VALUES (0, 0, 16, ?, ?, ?, ?, NULL, 'kernel')",
                   (name, t + start, t + end, 100 + i))
    db.execute("INSERT INTO kernels VALUES (0, 0, 16, ?, ?, ?, 102, NULL, 'kernel')",
               (b"bad\xffname", t + 203_000, t + 204_000))  # not UTF-8: stored as bytes
    db.commit()
    db.close()


def text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def track_name(kind, ident, domain=""):
    where = f"stream {ident & U64:#x}" if kind in ("stream", "comm kernels", "compute kernels",
                                                   "memcpy/memset") else f"thread {ident}"
    if kind in ("stream", "thread"):
        return where
    return f"{kind}{' ' + domain if domain else ''} ({where})"


def expected_slices(db_path):
    """(rank, track, name, start, end) of every slice the database holds, in ns
    from the earliest event, by the rules of docs/trace.md."""
    db = sqlite3.connect(db_path)
    db.text_factory = bytes
    one = lambda sql: db.execute(sql).fetchone()[0]  # noqa: E731
    origin = min(v for v in (one("SELECT min(host_start_ns) FROM collectives"),
                             one("SELECT min(start_ns) FROM collectives"),
                             one("SELECT min(start_ns) FROM kernels"),
                             one("SELECT min(start_ns) FROM ranges"),
                             one("SELECT min(start_ns) FROM syncs")) if v is not None)
    backend = {(r, 0): text(b) for r, b in db.execute("SELECT rank, backend FROM processes")}
    backend.update({(r, c): text(b)
                    for r, c, b in db.execute("SELECT rank, comm_id, backend FROM comms")})
    out = []

    def add(rank, track, name, start, end):
        end = start if end is None or end < start else end
        out.append((rank, track, text(name), start - origin, end - origin))

    for (rank, comm, stream, tid, op, timing, hs, he, s, e) in db.execute(
            "SELECT rank, comm_id, stream, tid, op, timing, host_start_ns, host_end_ns, start_ns,"
            " end_ns FROM collectives"):
        measured = s is not None and e is not None
        start, end = (s, e) if measured else (hs, he)
        if start is None:
            continue
        gloo = backend.get((rank, comm), backend.get((rank, 0))) == "gloo"
        add(rank, track_name("thread", tid) if gloo else track_name("stream", stream), op,
            start, end)
        if measured and text(timing) != "host" and hs is not None:
            add(rank, track_name("host calls", tid), op, hs, he)
    for rank, stream, name, s, e, kind, coll in db.execute(
            "SELECT rank, stream, name, start_ns, end_ns, kind, collective_id FROM kernels"
            " WHERE start_ns IS NOT NULL"):
        kind = text(kind)
        if "memcpy" in kind or "memset" in kind:
            cls = "memcpy/memset"
        elif coll is not None or kind in ("comm", "nccl", "communication") or \
                name.startswith(b"nccl"):
            cls = "comm kernels"
        else:
            cls = "compute kernels"
        add(rank, track_name(cls, stream), name, s, e)
    for rank, tid, domain, name, s, e in db.execute(
            "SELECT rank, tid, domain, name, start_ns, end_ns FROM ranges"
            " WHERE start_ns IS NOT NULL"):
        add(rank, track_name("nvtx", tid, text(domain)), name, s, e)
    for rank, tid, call, s, e in db.execute(
            "SELECT rank, tid, call, start_ns, end_ns FROM syncs WHERE start_ns IS NOT NULL"):
        add(rank, track_name("syncs", tid), call, s, e)
    hosts = {r: text(h) for r, h in db.execute("SELECT rank, host FROM processes")}
    db.close()
    rank_name = {r: f"rank {r}" + (f" ({h})" if h else "") for r, h in hosts.items()}
    return [(rank_name[r], t, n, s, e) for r, t, n, s, e in out]


def expected_counts(db_path):
    """Slices per (rank, track) by GROUP BY in the database: the counts of
    expected_slices() for runs too large to list."""
    db = sqlite3.connect(db_path)
    hosts = dict(db.execute("SELECT rank, host FROM processes"))
    rank_name = {r: f"rank {r}" + (f" ({h})" if h else "") for r, h in hosts.items()}
    backend = {(r, 0): b for r, b in db.execute("SELECT rank, backend FROM processes")}
    backend.update({(r, c): b for r, c, b in db.execute("SELECT rank, comm_id, backend FROM comms")})
    counts = collections.Counter()
    for rank, comm, stream, tid, measured, host, timing, n in db.execute(
            "SELECT rank, comm_id, stream, tid, start_ns IS NOT NULL AND end_ns IS NOT NULL,"
            " host_start_ns IS NOT NULL, timing, count(*) FROM collectives"
            " GROUP BY 1, 2, 3, 4, 5, 6, 7"):
        if not measured and not host:
            continue
        gloo = backend.get((rank, comm), backend.get((rank, 0))) == "gloo"
        counts[rank_name[rank], track_name("thread", tid) if gloo else
               track_name("stream", stream)] += n
        if measured and timing != "host" and host:
            counts[rank_name[rank], track_name("host calls", tid)] += n
    for rank, stream, kind, linked, nccl, n in db.execute(
            "SELECT rank, stream, kind, collective_id IS NOT NULL, substr(name, 1, 4) = 'nccl',"
            " count(*) FROM kernels WHERE start_ns IS NOT NULL GROUP BY 1, 2, 3, 4, 5"):
        if "memcpy" in kind or "memset" in kind:
            cls = "memcpy/memset"
        elif linked or nccl or kind in ("comm", "nccl", "communication"):
            cls = "comm kernels"
        else:
            cls = "compute kernels"
        counts[rank_name[rank], track_name(cls, stream)] += n
    for rank, tid, domain, n in db.execute(
            "SELECT rank, tid, domain, count(*) FROM ranges WHERE start_ns IS NOT NULL"
            " GROUP BY 1, 2, 3"):
        counts[rank_name[rank], track_name("nvtx", tid, domain)] += n
    for rank, tid, n in db.execute(
            "SELECT rank, tid, count(*) FROM syncs WHERE start_ns IS NOT NULL GROUP BY 1, 2"):
        counts[rank_name[rank], track_name("syncs", tid)] += n
    db.close()
    return counts


def packets_of(path):
    """The trace's packets, chunk by chunk (a large trace never whole in memory)."""
    with open(path, "rb") as f:
        outer = pb.Trace.FromString(f.read())
    problems = pb.unknown_fields(outer, "trace")
    for p in outer.packet:
        assert [f.name for f, _ in p.ListFields()] == ["compressed_packets"], p
        inner = pb.Trace.FromString(zlib.decompress(p.compressed_packets))
        problems += pb.unknown_fields(inner, "compressed trace")
        assert not problems, problems
        yield from inner.packet


def count_slices(path):
    """Slices per (rank, track), counted from BEGIN events; every track's
    ENDs must match its BEGINs."""
    tracks, begins, ends = {}, collections.Counter(), collections.Counter()
    for p in packets_of(path):
        if p.HasField("track_descriptor"):
            d = p.track_descriptor
            tracks[d.uuid] = (d.name, d.parent_uuid)
        elif p.HasField("track_event"):
            e = p.track_event
            (begins if e.type == BEGIN else ends)[e.track_uuid] += 1
    assert begins == ends, "BEGIN and END events do not pair up"
    counts = collections.Counter()
    for uuid, n in begins.items():
        name, parent = tracks[uuid]
        counts[tracks[parent][0], name] += n
    return counts


class Decoded:
    """The trace file decoded and replayed."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.chunks = len(pb.Trace.FromString(f.read()).packet)
        self.packets = list(packets_of(path))
        self.tracks = {}  # uuid -> TrackDescriptor
        self.events = []  # (ts, file order, type, uuid, name, category, args)
        self._replay()
        self.slices = self._pair()

    def _replay(self):
        interned = None
        for order, p in enumerate(self.packets):
            assert p.trusted_packet_sequence_id == 1, p
            assert not p.HasField("compressed_packets")
            if p.sequence_flags & pb.SEQ_INCREMENTAL_STATE_CLEARED:
                interned = collections.defaultdict(dict)
            assert interned is not None, "the first packet must clear the incremental state"
            needs = p.sequence_flags & pb.SEQ_NEEDS_INCREMENTAL_STATE
            if p.HasField("interned_data"):
                assert needs, p
                d = p.interned_data
                for table, entries in (("names", d.event_names), ("cats", d.event_categories),
                                       ("keys", d.debug_annotation_names)):
                    for e in entries:
                        assert e.iid and e.iid not in interned[table], e
                        interned[table][e.iid] = e.name
                for e in d.debug_annotation_string_values:
                    assert e.iid and e.iid not in interned["texts"], e
                    interned["texts"][e.iid] = e.str.decode("utf-8")
            if p.HasField("track_descriptor"):
                d = p.track_descriptor
                assert d.uuid and d.uuid not in self.tracks, d
                assert not d.parent_uuid or d.parent_uuid in self.tracks, d
                self.tracks[d.uuid] = d
            if p.HasField("track_event"):
                self._event(order, p, interned, needs)

    def _event(self, order, p, interned, needs):
        e = p.track_event
        assert e.track_uuid in self.tracks, "an event before its track's descriptor"
        assert p.HasField("timestamp")
        if e.type == END:
            assert not e.name_iid and not e.debug_annotations
            self.events.append((p.timestamp, order, END, e.track_uuid, None, None, None))
            return
        assert e.type == BEGIN and needs, p
        [category] = e.category_iids
        args = {}
        for a in e.debug_annotations:
            value = interned["texts"][a.string_value_iid] if a.HasField("string_value_iid") \
                else a.int_value
            args[interned["keys"][a.name_iid]] = value
        self.events.append((p.timestamp, order, BEGIN, e.track_uuid, interned["names"][e.name_iid],
                            interned["cats"][category], args))

    def _pair(self):
        """Slices as the trace processor builds them: per track, events by
        timestamp then file order, an END closing the innermost open slice."""
        by_track = collections.defaultdict(list)
        for ev in sorted(self.events, key=lambda ev: (ev[0], ev[1])):
            by_track[ev[3]].append(ev)
        slices = []
        for uuid, events in by_track.items():
            stack = []
            for ts, _, kind, _, name, cat, args in events:
                if kind == BEGIN:
                    stack.append((ts, name, cat, args))
                    continue
                assert stack, f"an END with no open slice on track {uuid}"
                start, name, cat, args = stack.pop()
                slices.append({"track": uuid, "name": name, "category": cat, "args": args,
                               "start": start, "end": ts, "depth": len(stack)})
            assert not stack, f"slices left open on track {uuid}"
        return slices

    def where(self, s):
        """(rank track, track) names of a slice."""
        track = self.tracks[s["track"]]
        return self.tracks[track.parent_uuid].name, track.name


def json_slices(path):
    """(rank, track, name, category, start, end, args) of the JSON trace's
    complete events, times in exact ns."""
    with open(path) as f:
        root = json.load(f, parse_float=decimal.Decimal)
    names = {}
    for e in root["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "process_name":
            names[e["pid"]] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    ns = lambda us: int(decimal.Decimal(us) * 1000)  # noqa: E731
    return sorted((names[e["pid"]], names[(e["pid"], e["tid"])], e["name"], e["cat"], ns(e["ts"]),
                   ns(e["ts"]) + ns(e["dur"]), json.dumps(e["args"], sort_keys=True))
                  for e in root["traceEvents"] if e["ph"] == "X")


class PerfettoTrace(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="ddpscope-pftrace-")
        cls.db = make_run(cls.dir, EXTRA)
        add_awkward_rows(cls.db)
        cls.pftrace = os.path.join(cls.dir, "run.pftrace")
        cls.json = os.path.join(cls.dir, "run.json")
        res = subprocess.run([DDPSCOPE, "report", cls.db, "-q", "--trace", cls.pftrace],
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        assert f"wrote {cls.pftrace} (Perfetto protobuf)" in res.stderr, res.stderr
        res = subprocess.run([DDPSCOPE, "report", cls.db, "-q", "--trace", cls.json],
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        cls.trace = Decoded(cls.pftrace)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_every_slice_of_the_database_on_its_track(self):
        got = sorted(self.trace.where(s) + (s["name"], s["start"], s["end"])
                     for s in self.trace.slices)
        want = sorted(expected_slices(self.db))
        self.assertEqual(len(got), len(want))
        self.assertEqual(got, want)
        # Counted per track too: one line per track on failure.
        count = lambda rows: collections.Counter(r[:2] for r in rows)  # noqa: E731
        self.assertEqual(count(got), count(want))
        self.assertEqual(count(want)[("rank 1 (node1)", "stream 0x30")], 2 + EXTRA)
        self.assertEqual(count_slices(self.pftrace), count(want))
        self.assertEqual(expected_counts(self.db), count(want))
        self.assertGreater(self.trace.chunks, 1)

    def test_same_categories_and_args_as_the_json_trace(self):
        got = sorted(self.trace.where(s) + (s["name"], s["category"], s["start"], s["end"],
                                            json.dumps(s["args"], sort_keys=True))
                     for s in self.trace.slices)
        self.assertEqual(got, json_slices(self.json))

    def test_collective_args(self):
        [first] = [s for s in self.trace.slices if s["category"] == "nccl"
                   and self.trace.where(s) == ("rank 0 (node0)", "stream 0x10")
                   and s["args"]["seq"] == 0]
        self.assertEqual(first["name"], "allreduce")
        self.assertEqual(first["args"], {"bytes": 4096, "count": 1024, "dtype": "float32",
                                         "seq": 0, "comm_id": "0x7123456789abcdef",
                                         "group_id": 0, "nranks": 2, "timing": "event"})
        self.assertEqual((first["start"], first["end"]), (14_000, 114_500))
        [host] = [s for s in self.trace.slices if s["category"] == "host"
                  and s["args"] == {"seq": 0}]
        self.assertEqual(self.trace.where(host), ("rank 0 (node0)", "host calls (thread 42)"))
        [gloo] = [s for s in self.trace.slices if s["category"] == "gloo"]
        self.assertEqual(self.trace.where(gloo), ("rank 0 (node0)", "thread 77"))
        self.assertEqual(gloo["args"]["dtype"], "bits32")
        [comm] = [s for s in self.trace.slices if s["name"] == "ncclDevKernel_AllReduce_Sum_f32"]
        self.assertEqual(comm["args"], {"device": 0, "correlation": 2, "collective_id": 1})

    def test_nesting_and_lanes(self):
        train = [s for s in self.trace.slices if self.trace.where(s)[1] == "nvtx train (thread 42)"]
        depth = {s["name"]: s["depth"] for s in train}
        self.assertEqual(depth, {"iteration": 0, "forward": 1, "backward": 1, "mark": 2,
                                 "load": 0, "prefetch": 0, "h\u00f6he": 0, "unfinished": 0})
        parent_of = {s["name"]: s["track"] for s in train}
        # The two ranges that overlap without nesting are on two tracks of one
        # name (the UI shows them as one); everything else shares the first.
        self.assertNotEqual(parent_of["load"], parent_of["prefetch"])
        self.assertEqual(len({s["track"] for s in train}), 2)
        lanes = [t for t in self.trace.tracks.values() if t.name == "nvtx train (thread 42)"]
        self.assertEqual(len(lanes), 2)
        self.assertEqual(len({(t.parent_uuid, t.sibling_order_rank) for t in lanes}), 1)
        unfinished = [s for s in train if s["name"] == "unfinished"][0]
        self.assertEqual(unfinished["start"], unfinished["end"])
        names = {s["name"] for s in self.trace.slices}
        self.assertIn("bad\ufffdname", names)

    def test_events_in_order_on_each_track(self):
        # Within a track, slices begin in order of time and end after they
        # begin: what lets the sort above pair them whatever the tie-break.
        last = {}
        for ts, order, kind, uuid, *_ in self.trace.events:
            if kind == BEGIN:
                self.assertGreaterEqual(ts, last.get(uuid, 0))
                last[uuid] = ts
        for s in self.trace.slices:
            self.assertLessEqual(s["start"], s["end"])

    def test_tracks_named_and_ordered_under_their_rank(self):
        ranks = {u: t for u, t in self.trace.tracks.items() if not t.parent_uuid}
        self.assertEqual(sorted(t.name for t in ranks.values()),
                         ["rank 0 (node0)", "rank 1 (node1)"])
        for t in ranks.values():
            self.assertEqual(t.child_ordering, pb.TrackDescriptor.EXPLICIT)
            self.assertIn("trace time 0 is 1700000000000001000 ns on the wall timeline",
                          t.description)
        children = sorted((t.sibling_order_rank, t.name) for t in self.trace.tracks.values()
                          if t.parent_uuid and self.trace.tracks[t.parent_uuid].name.startswith(
                              "rank 0"))
        # Kind by kind, as the JSON trace's thread ids: streams first, syncs last.
        self.assertEqual(children[0][1], "stream 0x10")
        self.assertEqual(children[-1][1], "syncs (thread 42)")


class FormatChoice(unittest.TestCase):
    """The file name decides; a small run's other names get the JSON (the
    size rule itself is tested in C++, tests/reports/test_trace_format.cpp)."""

    def test_names(self):
        d = tempfile.mkdtemp(prefix="ddpscope-trace-name-")
        try:
            db = make_run(d, 0)
            for name, proto in (("a.pftrace", True), ("a.perfetto-trace", True), ("A.PB", True),
                                ("a.json", False), ("a.trace", False), ("trace", False)):
                path = os.path.join(d, name)
                res = subprocess.run([DDPSCOPE, "report", db, "-q", "--trace", path],
                                     capture_output=True, text=True, timeout=300)
                self.assertEqual(res.returncode, 0, res.stderr)
                fmt = "Perfetto protobuf" if proto else "Chrome trace-event JSON"
                self.assertIn(f"wrote {path} ({fmt})", res.stderr)
                if proto:
                    self.assertEqual(len(Decoded(path).slices), len(expected_slices(db)))
                else:
                    self.assertEqual(len(json_slices(path)), len(expected_slices(db)))
        finally:
            shutil.rmtree(d, ignore_errors=True)


def print_counts(db_path, trace_path):
    """`test_perfetto_trace.py count RUN.db TRACE.pftrace`: slices per track
    in the trace against the database (for the benchmark's run); exit 1 on a
    difference."""
    got, want = count_slices(trace_path), expected_counts(db_path)
    for key in sorted(set(got) | set(want)):
        mark = "" if got[key] == want[key] else "   <-- differs"
        print(f"{key[0]:>16} | {key[1]:<34} trace {got[key]:>9}  database {want[key]:>9}{mark}")
    print(f"slices: trace {sum(got.values())}, database {sum(want.values())}; "
          f"tracks: {len(got)}; {'same' if got == want else 'DIFFERENT'}")
    return 0 if got == want else 1


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "count":
        sys.exit(print_counts(sys.argv[2], sys.argv[3]))
    main()
