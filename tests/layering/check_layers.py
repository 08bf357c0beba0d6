#!/usr/bin/env python3
"""The include rules of docs/architecture.md, checked over the sources.

usage: check_layers.py ROOT        checks ROOT's sources; exit 1 on any violation
       check_layers.py --self-test shows the checker catches planted violations

A file's module is its folder under the top level (`profiler/store`,
`injector/nccl`, `tuner`, ...). It may include its own module and the modules
the RULES below allow; a module not named in RULES is its top level's
(`tuner/model` is `tuner`). Vendor headers (CUDA, CUPTI, NCCL, NVTX, Gloo, MPI)
are allowed only in the source modules and backends named in VENDOR.
"""
import os
import re
import sys
import tempfile

LAYERS = ("profiler", "injector", "tuner", "reports", "record", "cli")

# module -> modules it may include (besides itself). `injector/<source>`
# stands for every capture source module under injector/ but the runtime.
RULES = {
    "profiler/core": set(),
    "profiler/store": {"profiler/core"},
    "profiler/analysis": {"profiler/core", "profiler/store"},
    "profiler/regression": {"profiler/core", "profiler/store", "profiler/analysis"},
    "injector/runtime": {"profiler/core", "profiler/store"},
    "injector/<source>": {"injector/runtime", "profiler/core", "profiler/store"},
    "tuner": {"profiler/core", "profiler/store", "profiler/analysis", "profiler/regression"},
    "reports": {"profiler/core", "profiler/store", "profiler/analysis", "profiler/regression"},
    "record": {"profiler/core", "profiler/store", "profiler/analysis", "profiler/regression",
               "reports"},
    "cli": {"profiler/core", "profiler/store", "profiler/analysis", "profiler/regression",
            "reports", "record", "tuner"},
}

# vendor header pattern -> modules where it may appear
VENDOR = [
    (re.compile(r"^(cuda|cupti|nvtx3/|nvToolsExt|nccl)"),
     {"injector/cupti", "injector/cuda", "injector/nvtx", "injector/nccl", "tuner"}),
    (re.compile(r"^gloo/"), {"injector/gloo", "tuner"}),
    (re.compile(r"^mpi\.h$"), {"tuner"}),
]
# Within tuner/, vendor headers only in its backends.
VENDOR_FOLDERS = {"tuner": "tuner/backends/"}

INCLUDE = re.compile(r'^\s*#\s*include\s+([<"])([^>"]+)[>"]', re.M)


def module_of(path):
    """`profiler/store/writer.cpp` -> `profiler/store`; `tuner/model/x.h` -> `tuner`."""
    parts = path.split("/")
    if parts[0] in ("profiler", "injector") and len(parts) > 2:
        return "/".join(parts[:2])
    return parts[0]


def rule_of(module):
    if module in RULES:
        return RULES[module]
    if module.startswith("injector/"):
        return RULES["injector/<source>"]
    return RULES.get(module.split("/")[0], set())


def check_file(rel, text):
    problems = []
    mine = module_of(rel)
    for kind, inc in INCLUDE.findall(text):
        if kind == '"' and inc.split("/")[0] in LAYERS:
            theirs = module_of(inc)
            if theirs != mine and theirs not in rule_of(mine):
                problems.append(f"{rel}: includes {inc} ({mine} may not depend on {theirs})")
            continue
        for pattern, allowed in VENDOR:
            if not pattern.search(inc):
                continue
            folder = VENDOR_FOLDERS.get(mine)
            if mine not in allowed or (folder and not rel.startswith(folder)):
                problems.append(f"{rel}: includes <{inc}> outside its source module")
    return problems


def check_tree(root):
    problems = []
    for layer in LAYERS:
        for folder, _, files in os.walk(os.path.join(root, layer)):
            for name in sorted(files):
                if not name.endswith((".cpp", ".h", ".c", ".hpp")):
                    continue
                path = os.path.join(folder, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                with open(path, encoding="utf-8", errors="replace") as f:
                    problems += check_file(rel, f.read())
    return problems


def self_test():
    planted = {
        "profiler/store/bad.cpp": '#include "profiler/analysis/analyze.h"\n',
        "profiler/core/gpu.cpp": "#include <cupti.h>\n",
        "injector/nccl/cross.cpp": '#include "injector/gloo/gloo_access.h"\n',
        "reports/up.cpp": '#include "tuner/sweep.h"\n',
        "tuner/sweep.cpp": "#include <nccl.h>\n",
        "injector/nvtx/fine.cpp": '#include <nvtx3/nvToolsExt.h>\n#include "injector/runtime/log.h"\n',
        "tuner/backends/fine.cpp": "#include <mpi.h>\n#include <gloo/allreduce.h>\n",
        "cli/fine.cpp": '#include "reports/renderer.h"\n#include "tuner/sweep.h"\n'
                        '#include "record/record.h"\n',
        "record/fine.cpp": '#include "reports/live.h"\n#include "profiler/store/merge.h"\n',
        "record/sideways.cpp": '#include "tuner/sweep.h"\n',
        "record/up.cpp": '#include "cli/commands.h"\n',
        "reports/back.cpp": '#include "record/watchers.h"\n',
        "profiler/analysis/back.cpp": '#include "record/window.h"\n',
    }
    with tempfile.TemporaryDirectory() as root:
        for rel, text in planted.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        found = {p.split(":")[0] for p in check_tree(root)}
    want = {"profiler/store/bad.cpp", "profiler/core/gpu.cpp", "injector/nccl/cross.cpp",
            "reports/up.cpp", "tuner/sweep.cpp", "record/sideways.cpp", "record/up.cpp",
            "reports/back.cpp", "profiler/analysis/back.cpp"}
    if found != want:
        print(f"check_layers self-test: flagged {sorted(found)}, want {sorted(want)}")
        return 1
    print(f"check_layers self-test: all {len(want)} planted violations flagged, "
          f"{len(planted) - len(want)} allowed includes passed")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    problems = check_tree(sys.argv[1])
    for p in problems:
        print(p)
    print(f"check_layers: {len(problems)} violation(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
