#!/usr/bin/env python3
"""Bad input to every `ddpscope` command, through the real executable.

One table of hostile inputs: files that are missing, directories, empty,
garbage, truncated, damaged, foreign or of a newer schema; unreadable files
(run as an unprivileged user when the test runs as root); numbers that are
negative, NaN, infinite, hexadecimal or too large; garbage topology specs,
workloads and calibration files; output paths that cannot be written. Each
must exit 2 with exactly one line on stderr, "ddpscope: ...", naming the file
or flag, print nothing on stdout, and leave no output (nor a temporary file)
behind. Output paths are refused before any work (an analysis, a sweep).

The databases are real recordings: the fuzz corpus's seeds
(tests/fuzz/corpus/), a two-rank DDP run and its rank files.
"""
import os
import shutil
import sqlite3
import struct
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DDPSCOPE = os.environ.get("DDPSCOPE_BIN", os.path.join(ROOT, "build", "ddpscope"))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
NOBODY = 65534


def write(path, data):
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return path


def read(path):
    with open(path, "rb") as f:
        return f.read()


def sql(path, *statements):
    con = sqlite3.connect(path)
    for s in statements:
        con.execute(s)
    con.commit()
    con.close()
    return path


class Files:
    """The hostile files, made once in a directory every user may read."""

    def __init__(self, tmp):
        self.tmp = tmp
        os.chmod(tmp, 0o755)
        p = lambda name: os.path.join(tmp, name)  # noqa: E731
        self.run = shutil.copy(os.path.join(CORPUS, "fuzz_run_db", "ddp_run.db"), p("run.db"))
        self.ranks = p("ranks")
        os.mkdir(self.ranks)
        data = read(os.path.join(CORPUS, "fuzz_merge", "ddp_ranks"))
        (first,) = struct.unpack("<I", data[:4])
        write(os.path.join(self.ranks, "rank-0.db"), data[4:4 + first])
        write(os.path.join(self.ranks, "rank-1.db"), data[4 + first:])
        self.missing = p("missing.db")
        self.directory = p("directory.db")
        os.mkdir(self.directory)
        self.empty = write(p("empty.db"), b"")
        self.garbage = write(p("garbage.db"), "this is not a database\n" * 50)
        good = read(self.run)
        self.truncated = write(p("truncated.db"), good[:1000])
        # Page 3 onwards overwritten: the header and schema read, the rows do not.
        self.damaged = write(p("damaged.db"), good[:1024] + bytes([0xA5]) * (len(good) - 1024))
        self.foreign = sql(p("foreign.db"), "CREATE TABLE t(x)", "INSERT INTO t VALUES(1)")
        self.newer = sql(shutil.copy(self.run, p("newer.db")), "PRAGMA user_version=99")
        self.wrong_columns = sql(shutil.copy(self.run, p("columns.db")), "DROP TABLE collectives",
                                 "CREATE TABLE collectives(x)")
        # A time no clock gives, in a table only the trace reads (found by fuzz_run_db).
        self.bad_time = sql(shutil.copy(self.run, p("bad-time.db")),
                            "INSERT INTO ranges VALUES(0, 1, '', 'step', -9223372036854775808, 0)")
        self.unreadable = shutil.copy(self.run, p("unreadable.db"))
        os.chmod(self.unreadable, 0)
        self.text_file = write(p("notes.txt"), "a file, not a directory\n")
        self.nodir = p("no/such/dir")
        self.empty_ranks = p("no-ranks")
        os.mkdir(self.empty_ranks)
        self.bad_rank = p("bad-rank")
        os.mkdir(self.bad_rank)
        shutil.copy(os.path.join(self.ranks, "rank-0.db"), self.bad_rank)
        write(os.path.join(self.bad_rank, "rank-1.db"), good[:2000])
        self.twin_ranks = p("twin-ranks")
        os.mkdir(self.twin_ranks)
        shutil.copy(os.path.join(self.ranks, "rank-0.db"), self.twin_ranks)
        shutil.copy(os.path.join(self.ranks, "rank-0.db"), os.path.join(self.twin_ranks, "rank-1.db"))
        self.merged_as_rank = p("merged-as-rank")
        os.mkdir(self.merged_as_rank)
        shutil.copy(self.run, os.path.join(self.merged_as_rank, "rank-0.db"))
        # A profiler trace already there: HTA would read it as one more rank.
        self.other_traces = p("traces")
        os.mkdir(self.other_traces)
        write(os.path.join(self.other_traces, "host_1234.1700000000.pt.trace.json"), "{}")
        self.recorded = p("recorded")
        shutil.copytree(self.ranks, self.recorded)
        self.workloads()
        self.topologies()
        self.calibrations()

    def json(self, name, text):
        return write(os.path.join(self.tmp, name), text)

    def workloads(self):
        param = '{"name": "w", "numel": %s, "dtype": "float32", "backward_us": %s}'
        body = '{"name": "x", "forward_us": 1, "optimizer_us": 1, "params": [%s]}'
        self.wl_garbage = self.json("wl-garbage.json", "{not json\n at all")
        self.wl_1e400 = self.json("wl-1e400.json", body % (param % ("1e400", "1")))
        self.wl_overflow = self.json("wl-overflow.json", body % (param % ("4611686018427387904", "1")))
        self.wl_negative = self.json("wl-negative.json", body % (param % ("-5", "1")))
        self.wl_time = self.json("wl-time.json", body % (param % ("10", "1e300")))
        self.wl_dtype = self.json("wl-dtype.json", body % param.replace("float32", "float33") % (
            "10", "1"))

    def topologies(self):
        self.topo_garbage = self.json("topo-garbage.json", "\x01\x02 nodes: many\n")
        self.topo_ranks = self.json("topo-ranks.json", '{"nodes": 1000000, "ranks_per_node": 3}')
        self.topo_unit = self.json("topo-unit.json",
                                   '{"nodes": 2, "ranks_per_node": 2, "inter": "fast"}')

    def calibrations(self):
        head = '{"kind": "ddpscope-calibration", "backend": "gloo", '
        intra = '"intra": {"alpha_us": 1, "beta_ns_per_byte": 1, "gamma_ns_per_byte": 0%s}'
        self.cal_garbage = self.json("cal-garbage.json", "[1, 2")
        self.cal_foreign = self.json("cal-foreign.json", '{"kind": "something else"}')
        self.cal_type = self.json("cal-type.json", head + intra % ', "overlapped": "yes"' +
                                  ', "comm_rate_during_compute": 0.5}')
        self.cal_rate = self.json("cal-rate.json", head + intra % "" +
                                  ', "comm_rate_during_compute": 1e-300}')
        self.cal_nan = self.json("cal-nan.json", head + intra.replace('"alpha_us": 1',
                                 '"alpha_us": NaN') % "" + ', "comm_rate_during_compute": 0.5}')


def cases(f):
    """(what, argv, text the line must name, outputs that must not exist)."""
    out = os.path.join(f.tmp, "out")
    nodir_out = os.path.join(f.nodir, "out.json")
    dry = ["tune", "--dry-run"]
    model = ["tune", "--backend", "model", "--nproc", "2"]
    small = os.path.join(CORPUS, "fuzz_workload_json", "two_layer_mlp.json")
    sweep = ["tune", "--workload", small, "--bucket-mb", "1", "--iters", "1", "--warmup", "0"]
    check = ["check", "--baseline", f.run, "--candidate"]
    rows = [
        # report: the run database
        ("report: missing file", ["report", f.missing], f.missing, []),
        ("report: a directory", ["report", f.directory], f.directory, []),
        ("report: empty file", ["report", f.empty], f.empty, []),
        ("report: garbage", ["report", f.garbage], f.garbage, []),
        ("report: truncated", ["report", f.truncated], f.truncated, []),
        ("report: damaged pages", ["report", f.damaged], f.damaged, []),
        ("report: foreign SQLite", ["report", f.foreign], f.foreign, []),
        ("report: newer schema", ["report", f.newer], f.newer, []),
        ("report: a table without its columns", ["report", f.wrong_columns], f.wrong_columns, []),
        ("report: unreadable", ["report", f.unreadable], f.unreadable, []),
        ("report: empty path", ["report", ""], "ddpscope: ", []),
        ("report DIR: no rank files", ["report", f.empty_ranks], f.empty_ranks, []),
        ("report DIR: a damaged rank file", ["report", f.bad_rank, "--json", out],
         os.path.join(f.bad_rank, "rank-1.db"), [out]),
        ("report DIR: one rank twice", ["report", f.twin_ranks, "--json", out], "rank 0", [out]),
        ("report DIR: a merged run as a rank file", ["report", f.merged_as_rank, "--json", out],
         os.path.join(f.merged_as_rank, "rank-0.db"), [out]),
        # report: the outputs
        ("report --json: no such directory", ["report", "-q", f.run, "--json", nodir_out],
         nodir_out, [nodir_out]),
        ("report --json: a directory", ["report", "-q", f.run, "--json", f.directory],
         f.directory, []),
        ("report --json: empty", ["report", "-q", f.run, "--json", ""], "--json", []),
        ("report --trace: no such directory", ["report", "-q", f.run, "--trace", nodir_out],
         nodir_out, [nodir_out]),
        ("report --html: a directory", ["report", "-q", f.run, "--html", f.directory],
         f.directory, []),
        ("report --csv: a file", ["report", "-q", f.run, "--csv", f.text_file], f.text_file, []),
        ("report: damaged, with --json", ["report", f.damaged, "--json", out], f.damaged, [out]),
        ("report --trace: a stored time out of range", ["report", "-q", f.bad_time, "--trace", out],
         f.bad_time, [out]),
        ("report --kineto: a file", ["report", "-q", f.run, "--kineto", f.text_file],
         f.text_file, []),
        ("report --kineto: no such directory", ["report", "-q", f.run, "--kineto", nodir_out],
         nodir_out, [nodir_out]),
        ("report --kineto: a directory holding another trace",
         ["report", "-q", f.run, "--kineto", f.other_traces], "pt.trace.json",
         [os.path.join(f.other_traces, "rank-0.json")]),
        ("report --kineto: a stored time out of range", ["report", "-q", f.bad_time, "--kineto",
                                                         out], f.bad_time, [out]),
        ("report --html: no such directory, before the analysis",
         ["report", f.run, "--html", nodir_out], nodir_out, [nodir_out]),
        # merge
        ("merge: missing directory", ["merge", f.missing], f.missing, []),
        ("merge: a file", ["merge", f.text_file], f.text_file, []),
        ("merge: no rank files", ["merge", f.empty_ranks], f.empty_ranks,
         [os.path.join(f.empty_ranks, "run.db")]),
        ("merge: a damaged rank file", ["merge", f.bad_rank, "-o", out],
         os.path.join(f.bad_rank, "rank-1.db"), [out]),
        ("merge: one rank twice", ["merge", f.twin_ranks, "-o", out], "rank 0", [out]),
        ("merge: a merged run as a rank file", ["merge", f.merged_as_rank, "-o", out],
         os.path.join(f.merged_as_rank, "rank-0.db"), [out]),
        ("merge -o: a rank file", ["merge", f.ranks, "-o", os.path.join(f.ranks, "rank-1.db")],
         os.path.join(f.ranks, "rank-1.db"), []),
        ("merge -o: no such directory", ["merge", f.ranks, "-o", nodir_out], nodir_out,
         [nodir_out]),
        ("merge -o: a directory", ["merge", f.ranks, "-o", f.directory], f.directory, []),
        ("merge -o: empty", ["merge", f.ranks, "-o", ""], "--output", []),
        # check
        ("check: garbage candidate", [*check, f.garbage], f.garbage, []),
        ("check: missing candidate", [*check, f.missing], f.missing, []),
        ("check: damaged candidate", [*check, f.damaged, "--junit", out], f.damaged, [out]),
        ("check: a directory", [*check, f.directory], f.directory, []),
        ("check --tolerance nan", [*check, f.run, "--tolerance", "nan"], "--tolerance", []),
        ("check --tolerance -1", [*check, f.run, "--tolerance", "-1"], "--tolerance", []),
        ("check --tolerance 1e400", [*check, f.run, "--tolerance", "1e400"], "--tolerance", []),
        ("check --confidence 100", [*check, f.run, "--confidence", "100"], "--confidence", []),
        ("check --min-samples -1", [*check, f.run, "--min-samples", "-1"], "--min-samples", []),
        ("check --min-samples huge", [*check, f.run, "--min-samples", "99999999999999999999"],
         "--min-samples", []),
        ("check --metric unknown", [*check, f.run, "--metric", "latency"], "--metric", []),
        ("check --junit: no such directory", [*check, f.run, "--junit", nodir_out], nodir_out,
         [nodir_out]),
        ("check --markdown: empty", [*check, f.run, "--markdown", ""], "--markdown", []),
        # tune: workloads
        ("tune --workload: missing", [*dry, "--workload", f.missing + ".json"],
         f.missing + ".json", []),
        ("tune --workload: a directory", [*dry, "--workload", f.directory], f.directory, []),
        ("tune --workload: garbage", [*dry, "--workload", f.wl_garbage], f.wl_garbage, []),
        ("tune --workload: numel 1e400", [*dry, "--workload", f.wl_1e400], f.wl_1e400, []),
        ("tune --workload: bytes past 2^64", [*dry, "--workload", f.wl_overflow], f.wl_overflow,
         []),
        ("tune --workload: negative numel", [*dry, "--workload", f.wl_negative], f.wl_negative,
         []),
        ("tune --workload: a time of 1e300 us", [*dry, "--workload", f.wl_time], f.wl_time, []),
        ("tune --workload: unknown dtype", [*dry, "--workload", f.wl_dtype], f.wl_dtype, []),
        ("tune --workload: damaged run", [*dry, "--workload", f.damaged], f.damaged, []),
        ("tune --workload: foreign run", [*dry, "--workload", f.foreign], f.foreign, []),
        ("tune --workload: unknown preset", [*dry, "--workload", "preset:vgg"], "vgg", []),
        ("tune --workload: /dev/zero", [*dry, "--workload", "/dev/zero"], "/dev/zero", []),
        # tune: numbers
        ("tune --bucket-mb: empty item", [*dry, "--bucket-mb", "1,,2"], "--bucket-mb", []),
        ("tune --bucket-mb 1e309", [*dry, "--bucket-mb", "1e309"], "--bucket-mb", []),
        ("tune --bucket-mb nan", [*dry, "--bucket-mb", "nan"], "--bucket-mb", []),
        ("tune --bucket-mb hex", [*dry, "--bucket-mb", "0x10"], "--bucket-mb", []),
        ("tune --bucket-mb -1", [*dry, "--bucket-mb", "-1"], "--bucket-mb", []),
        ("tune --bucket-mb 1e-300", [*dry, "--bucket-mb", "1e-300"], "--bucket-mb", []),
        ("tune --first-bucket-mb inf", [*dry, "--first-bucket-mb", "inf"], "--first-bucket-mb",
         []),
        ("tune --first-bucket-mb 1e300", [*dry, "--first-bucket-mb", "1e300"],
         "--first-bucket-mb", []),
        ("tune --nproc 0", [*dry, "--nproc", "0"], "--nproc", []),
        ("tune --nproc 100000", [*dry, "--nproc", "100000"], "--nproc", []),
        ("tune --nproc past int", [*dry, "--nproc", "99999999999"], "--nproc", []),
        ("tune --iters 0", [*dry, "--iters", "0"], "--iters", []),
        ("tune --iters 2e9", [*dry, "--iters", "2000000000"], "--iters", []),
        ("tune --warmup -1", [*dry, "--warmup", "-1"], "--warmup", []),
        ("tune --backend unknown", [*dry, "--backend", "gloo,nvlink"], "--backend", []),
        ("tune --gpu unknown", [*dry, "--backend", "model", "--gpu", "turing"], "--gpu", []),
        ("tune --model-algorithm unknown", [*dry, "--model-algorithm", "butterfly"],
         "--model-algorithm", []),
        ("tune --json: no such directory", [*dry, "--json", nodir_out], nodir_out, [nodir_out]),
        # tune: outputs and the results folder, refused before anything is measured
        ("tune --results-dir: a file", [*sweep, "--results-dir", f.text_file], "--results-dir",
         []),
        ("tune -o: garbage database", [*sweep, "-o", f.garbage], f.garbage, []),
        ("tune -o: no such directory", [*sweep, "-o", nodir_out], nodir_out, [nodir_out]),
        ("tune --json: a directory", [*sweep, "--json", f.directory], f.directory, []),
        ("tune --nccl-tuner-config: no such directory",
         [*model, "--nccl-tuner-config", nodir_out], nodir_out, [nodir_out]),
        ("tune --calibrate into no such directory",
         [*sweep, "--calibrate", "--calibration", nodir_out], nodir_out, [nodir_out]),
        # tune: topologies
        ("tune --topology garbage", [*dry, "--topology", "lots"], "lots", []),
        ("tune --topology too many ranks", [*dry, "--topology", "1000000x1000000"],
         "1000000x1000000", []),
        ("tune --topology nan", [*dry, "--topology", "2x2:inter=nan"], "2x2:inter=nan", []),
        ("tune --topology a directory", [*dry, "--topology", f.directory], f.directory, []),
        ("tune --topology garbage file", [*dry, "--topology", f.topo_garbage], f.topo_garbage,
         []),
        ("tune --topology file of 3e6 ranks", [*dry, "--topology", f.topo_ranks], f.topo_ranks,
         []),
        ("tune --topology file: unknown unit", [*dry, "--topology", f.topo_unit], f.topo_unit, []),
        # tune: calibration files (the model predicts; nothing is measured)
        ("tune --calibration: missing", [*model, "--calibration", f.missing], f.missing, []),
        ("tune --calibration: a directory", [*model, "--calibration", f.directory], f.directory,
         []),
        ("tune --calibration: garbage", [*model, "--calibration", f.cal_garbage], f.cal_garbage,
         []),
        ("tune --calibration: foreign", [*model, "--calibration", f.cal_foreign], f.cal_foreign,
         []),
        ("tune --calibration: wrong type", [*model, "--calibration", f.cal_type, "--json", out],
         f.cal_type, [out]),
        ("tune --calibration: rate 1e-300", [*model, "--calibration", f.cal_rate], f.cal_rate, []),
        ("tune --calibration: NaN", [*model, "--calibration", f.cal_nan], f.cal_nan, []),
        # record
        ("record --nproc -1", ["record", "-o", out, "--nproc", "-1", "--", "true"], "--nproc",
         [out]),
        ("record --nproc 5000", ["record", "-o", out, "--nproc", "5000", "--", "true"], "--nproc",
         [out]),
        ("record --flush-ms 0", ["record", "-o", out, "--flush-ms", "0", "--", "true"],
         "--flush-ms", [out]),
        ("record -o: a file", ["record", "-o", f.text_file, "--", "true"], f.text_file, []),
        ("record -o: holds a recording", ["record", "-o", f.recorded, "--", "true"], f.recorded,
         [os.path.join(f.recorded, "run.db")]),
        ("record -o: empty", ["record", "-o", "", "--", "true"], "--output", []),
    ]
    return rows


class BadInput(unittest.TestCase):
    def test_every_command_refuses_hostile_input_in_one_line(self):
        self.assertTrue(os.path.exists(DDPSCOPE), DDPSCOPE)
        with tempfile.TemporaryDirectory() as tmp:
            f = Files(tmp)
            before = {r: read(os.path.join(f.recorded, r)) for r in os.listdir(f.recorded)}
            for what, argv, named, outputs in cases(f):
                with self.subTest(what):
                    self.expect_one_line(f, argv, named, outputs)
            after = {r: read(os.path.join(f.recorded, r)) for r in os.listdir(f.recorded)}
            self.assertEqual(before, after, "a refused record touched the recording there")

    def expect_one_line(self, f, argv, named, outputs):
        # Root reads any file: the unreadable one is tried as nobody.
        drop = None
        if f.unreadable in argv and os.geteuid() == 0:
            drop = lambda: (os.setgid(NOBODY), os.setuid(NOBODY))  # noqa: E731
        res = subprocess.run([DDPSCOPE, *argv], capture_output=True, text=True, timeout=120,
                             preexec_fn=drop, cwd=f.tmp)
        lines = res.stderr.splitlines()
        self.assertEqual(res.returncode, 2, f"{argv}: {res.stderr}")
        self.assertEqual(len(lines), 1, f"{argv}: {res.stderr}")
        self.assertTrue(lines[0].startswith("ddpscope: "), lines[0])
        self.assertIn(named, lines[0])
        self.assertEqual(res.stdout, "", f"{argv}: refused, yet printed results")
        for path in outputs:
            self.assertFalse(os.path.exists(path), f"{argv} left {path}")
        leftovers = [n for n in os.listdir(f.tmp) if ".tmp-" in n]
        self.assertEqual(leftovers, [], f"{argv} left temporary files")


if __name__ == "__main__":
    sys.path.insert(0, os.path.join(ROOT, "tests", "support"))
    import ctest_unittest  # noqa: E402  (exit 77 when skipped: ctest's "Skipped")

    ctest_unittest.main(argv=[sys.argv[0]] + sys.argv[1:])
