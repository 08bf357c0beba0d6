#!/usr/bin/env python3
"""The guide's examples run: every ```sh block of the README and docs/ that a
`<!-- doc-test[: root] [status A,B] [expect REGEX] -->` line precedes is run, in
document order, each file's blocks in one scratch folder of their own (so a
`record -o run1` feeds the `report run1/run.db` after it), with `build/`,
`examples/`, `scripts/` and `bench/` linked in and `python3` the repo's torch
Python. A block must end with one of its statuses (0 unless given) and, with
`expect`, print something the regular expression finds. Prints each block's
command and the tail of its output; exits 1 if a block failed. A block marked
`root` (network namespaces, tc) is left out when not run as root, and the
run then ends with exit 77 (ctest: Skipped), never passed, once the others ran.

    run_guide_commands.py ROOT [BUILD_DIR]
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

MARK = re.compile(r"^<!-- doc-test(?::\s*(.*?))?\s*-->\s*$")


def blocks(path):
    """(line, statuses, expect regex, script, needs root) for each marked sh block."""
    lines = open(path, encoding="utf-8").read().splitlines()
    out = []
    for i, line in enumerate(lines):
        m = MARK.match(line)
        if not m or i + 1 >= len(lines) or lines[i + 1].strip() != "```sh":
            continue
        spec = m.group(1) or ""
        status = re.search(r"status\s+([\d,]+)", spec)
        expect = re.search(r"expect\s+(.*)$", spec)
        end = next(j for j in range(i + 2, len(lines)) if lines[j].strip() == "```")
        out.append((i + 1, [int(s) for s in status.group(1).split(",")] if status else [0],
                    expect.group(1) if expect else None, "\n".join(lines[i + 2:end]),
                    re.match(r"root\b", spec) is not None))
    return out


def scratch(root, build):
    d = tempfile.mkdtemp(prefix="ddpscope-doc-test-")
    os.symlink(build, os.path.join(d, "build"))
    for name in ("examples", "scripts", "bench"):
        os.symlink(os.path.join(root, name), os.path.join(d, name))
    bin_dir = os.path.join(d, ".bin")
    os.mkdir(bin_dir)
    torch_py = os.path.join(root, ".venv", "bin", "python")
    if not os.path.exists(torch_py):
        torch_py = "/usr/bin/python3"
    # A wrapper, not a link: a venv's Python finds its packages by its own path.
    for name in ("python3", "python"):
        with open(os.path.join(bin_dir, name), "w") as f:
            f.write(f'#!/bin/sh\nexec "{torch_py}" "$@"\n')
        os.chmod(os.path.join(bin_dir, name), 0o755)
    return d, bin_dir


def main():
    root = os.path.abspath(sys.argv[1])
    build = os.path.abspath(sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "build"))
    pages = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    failed, ran, left_out = [], 0, []
    is_root = os.geteuid() == 0
    for page in pages:
        found = blocks(page)
        if not found:
            continue
        work, bin_dir = scratch(root, build)
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"], OMP_NUM_THREADS="1")
        for line, statuses, expect, script, needs_root in found:
            where = f"{os.path.relpath(page, root)}:{line}"
            if needs_root and not is_root:
                print(f"skip {where}: needs root (network namespaces, tc)")
                left_out.append(where)
                continue
            r = subprocess.run(["bash", "-c", "set -e\n" + script], cwd=work, env=env,
                               capture_output=True, text=True, timeout=600)
            ran += 1
            text = r.stdout + r.stderr
            ok = r.returncode in statuses and (not expect or re.search(expect, text))
            print(f"{'ok  ' if ok else 'FAIL'} {where}: {script.splitlines()[0][:100]} "
                  f"(status {r.returncode})")
            if not ok:
                print("\n".join("    " + l for l in text.strip().splitlines()[-15:]))
                failed.append(where)
        shutil.rmtree(work, ignore_errors=True)
    print(f"{ran} guide blocks run, {len(failed)} failed, {len(left_out)} left out (need root)")
    if failed or not ran:
        sys.exit(1)
    sys.exit(77 if left_out else 0)


if __name__ == "__main__":
    main()
