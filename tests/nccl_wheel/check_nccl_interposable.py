#!/usr/bin/env python3
"""Does the torch wheel still reach NCCL through symbols our LD_PRELOAD hooks interpose?

ddpscope's NCCL hooks (injector/nccl/) see a collective only when the library
that calls it imports the NCCL entry point as an undefined dynamic symbol: the
dynamic linker then binds the call to the first definition in the global
scope, our preloaded export. A library that imports NCCL's strong `pnccl*`
names, or that dlopen()s libnccl apart and dlsym()s the entry points by name,
would bypass the hooks without a sound. torch 2.15's `init_process_group("nccl")`
builds ProcessGroupNCCL2 (the torchcomms engine, `c10d::nccl2` inside
libtorch_cuda.so); this check reads every shared library of the installed
wheel (torch/lib, and torchcomms where present) and says which path each takes.

  check_nccl_interposable.py SITE_PACKAGES|VENV [--inject LIB]   exit 0 ok, 1 not
      interposable, 77 no torch wheel there (ctest: Skipped)
  check_nccl_interposable.py --self-test                      the verdict on
      doctored inputs: it must flag each one

The verdict is a pure function of what the libraries import and contain
(`verdict`), so the self-test feeds it hand-made inputs.
"""
import dataclasses
import glob
import os
import re
import subprocess
import sys

# The entry points torch's NCCL process groups (ProcessGroupNCCL and the
# torchcomms engine of ProcessGroupNCCL2) call for collectives, point-to-point
# and groups: each must be imported by some wheel library and is hooked by
# injector/nccl/nccl_collectives.cpp.
REQUIRED = (
    "ncclAllReduce", "ncclBroadcast", "ncclReduce", "ncclAllGather", "ncclReduceScatter",
    "ncclSend", "ncclRecv", "ncclGroupStart", "ncclGroupEnd",
)
# Hooked too, though a given torch may not call them (all-to-all, gather and
# scatter: torch builds those from send/recv; the communicator calls).
HOOKED_OPTIONAL = (
    "ncclAlltoAll", "ncclGather", "ncclScatter", "ncclBcast",
    "ncclCommInitRank", "ncclCommInitRankConfig", "ncclCommInitAll", "ncclCommSplit",
    "ncclCommDestroy", "ncclCommAbort", "ncclCommFinalize",
)

# Libraries that contain "libnccl" and import dlopen/dlsym for reasons other
# than reaching NCCL's API, each with why.
BENIGN = {
    # NCCL itself: it dlopen()s its own plugins (libnccl-net*.so,
    # libnccl-tuner*.so, libnccl-profiler*.so: NCCL_*_PLUGIN), ours among them.
    "libnccl.so.2": "NCCL itself, loading its network, tuner and profiler plugins",
}


@dataclasses.dataclass
class Library:
    """What the check needs of one shared library."""
    name: str
    undefined: frozenset  # undefined dynamic symbols (bound by the loader)
    defined: frozenset    # defined dynamic symbols
    nccl_strings: frozenset  # strings naming libnccl or an nccl* entry point


def nccl_names(symbols):
    return {s for s in symbols if re.fullmatch(r"p?nccl[A-Z]\w*", s)}


def verdict(libs, benign=BENIGN):
    """Problems (strings), [] when every NCCL call of `libs` is interposable."""
    problems = []
    imported = set()
    for lib in libs:
        if lib.name in benign:
            continue
        imported |= {s for s in lib.undefined if s.startswith("nccl")}
        for s in sorted(nccl_names(lib.undefined)):
            if s.startswith("pnccl"):
                problems.append(f"{lib.name} imports {s}: NCCL's strong name, past our nccl* hooks")
        loads = {"dlopen", "dlsym", "dlvsym"} & lib.undefined
        if not loads:
            continue
        if any("libnccl" in s for s in lib.nccl_strings):
            problems.append(f"{lib.name} names libnccl and imports {', '.join(sorted(loads))}: "
                            "it may dlopen NCCL apart")
        by_name = {s for s in lib.nccl_strings if s in REQUIRED + HOOKED_OPTIONAL}
        for s in sorted(by_name - lib.undefined - lib.defined):
            problems.append(f"{lib.name} holds the string {s} and imports "
                            f"{', '.join(sorted(loads))}, not {s}: a lookup by name")
    for s in REQUIRED:
        if s not in imported:
            problems.append(f"no wheel library imports {s}: the torch path does not reach "
                            "our hook through the loader")
    return problems


def dynamic_symbols(path, flag):
    out = subprocess.run(["nm", "-D", flag, path], capture_output=True, text=True).stdout
    return frozenset(line.split()[-1].split("@")[0] for line in out.splitlines() if line.split())


# The sections a string a program passes to dlopen()/dlsym() lives in. Not
# .dynstr: the name of a library the loader itself loads (DT_NEEDED
# libnccl.so.2) and the names of imported symbols are there.
DATA_SECTIONS = (".rodata", ".lrodata", ".data", ".data.rel.ro")


def data_strings(path):
    args = ["readelf", "-W"] + [a for s in DATA_SECTIONS for a in ("-p", s)] + [path]
    out = subprocess.run(args, capture_output=True, text=True, errors="replace").stdout
    # "  [  1f0]  text": the text after the offset
    return [m.group(1) for m in re.finditer(r"^\s*\[\s*[0-9a-f]+\]\s\s(.*)$", out, re.M)]


def read_library(path):
    wanted = frozenset(s for s in data_strings(path)
                       if "libnccl" in s or re.fullmatch(r"p?nccl[A-Z]\w*", s))
    return Library(os.path.basename(path), dynamic_symbols(path, "--undefined-only"),
                   dynamic_symbols(path, "--defined-only"), wanted)


def wheel_libraries(site_packages):
    pats = ["torch/lib/*.so*", "torchcomms/**/*.so*", "torch/_C*.so", "nvidia/nccl/lib/*.so*"]
    paths = set()
    for pat in pats:
        paths.update(glob.glob(os.path.join(site_packages, pat), recursive=True))
    return sorted(p for p in paths if os.path.isfile(p))


def report(libs):
    for lib in libs:
        calls = sorted(s for s in lib.undefined if s.startswith("nccl"))
        if calls or lib.nccl_strings & {"libnccl.so", "libnccl.so.2"}:
            loads = sorted({"dlopen", "dlsym"} & lib.undefined)
            print(f"{lib.name}: imports {len(calls)} nccl* ({', '.join(calls[:12])}"
                  f"{' ...' if len(calls) > 12 else ''}); dl: {loads or 'none'}; "
                  f"libnccl strings: {sorted(s for s in lib.nccl_strings if 'libnccl' in s)[:4]}")


def check_inject(inject, problems):
    exported = dynamic_symbols(inject, "--defined-only")
    for s in REQUIRED:
        if s not in exported:
            problems.append(f"{os.path.basename(inject)} does not export {s}: no hook for it")


def self_test():
    ok = Library("libtorch_cuda.so", frozenset(REQUIRED + ("dlopen", "dlsym")), frozenset(),
                 frozenset({"ncclAllReduce"}))
    nccl = Library("libnccl.so.2", frozenset({"dlopen", "dlsym"}), frozenset(REQUIRED),
                   frozenset({"libnccl-net.so", "libnccl-profiler.so"}))
    cases = {
        "the wheel as it should be": ([ok, nccl], 0),
        "an entry point no longer imported": (
            [dataclasses.replace(ok, undefined=ok.undefined - {"ncclAllGather"}), nccl], 1),
        "the strong pnccl name imported": (
            [dataclasses.replace(ok, undefined=ok.undefined | {"pncclAllReduce"}), nccl], 1),
        "libnccl dlopen()ed apart": (
            [ok, nccl, Library("libtorchcomms_nccl.so", frozenset({"dlopen", "dlsym"}),
                               frozenset(), frozenset({"libnccl.so.2"}))], 1),
        "an entry point looked up by name": (
            [ok, nccl, Library("libc10d_nccl2.so", frozenset({"dlsym"}), frozenset(),
                               frozenset({"ncclReduceScatter"}))], 1),
        "NCCL itself not excused": ([ok, nccl], 1, {}),
    }
    failed = 0
    for name, (libs, want, *benign) in cases.items():
        got = verdict(libs, *benign)
        flagged = 1 if got else 0
        print(f"{'ok  ' if flagged == want else 'FAIL'} {name}: {got or 'no problem'}")
        failed += flagged != want
    return 1 if failed else 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]  # site-packages, or a virtual environment holding one
    root = (glob.glob(os.path.join(root, "lib/python3*/site-packages")) or [root])[0]
    paths = wheel_libraries(root)
    if not any(os.path.basename(p) == "libtorch_cuda.so" for p in paths):
        print(f"SKIP: no torch CUDA wheel under {argv[1]} (libtorch_cuda.so)")
        return 77
    libs = [read_library(p) for p in paths]
    report(libs)
    problems = verdict(libs)
    if len(argv) == 4 and argv[2] == "--inject":
        check_inject(argv[3], problems)
    for p in problems:
        print("NOT INTERPOSABLE:", p)
    print("ok: every NCCL entry point torch calls is an undefined dynamic symbol"
          if not problems else f"{len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
