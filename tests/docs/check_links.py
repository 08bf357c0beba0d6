#!/usr/bin/env python3
"""Every relative link in the README, the CHANGELOG and docs/ resolves.

A link is a Markdown link `[text](target)` whose target is not a URL: the
file (and, for `file.md#anchor`, a heading of that file) must exist. Prints
each broken link as `file:line: target (why)` and exits 1 if there is one.

    check_links.py ROOT
    check_links.py --self-test     (the checker flags planted broken links)
"""
import os
import re
import sys
import tempfile

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^\s*```")


def anchors(path):
    """GitHub's anchors for a Markdown file's headings."""
    out = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^#+\s+(.*)", line)
            if m:
                text = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower())
                out.add(text.replace(" ", "-"))
    return out


def broken_links(root, files):
    bad = []
    for rel in files:
        path = os.path.join(root, rel)
        in_code = False
        with open(path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                if FENCE.match(line):
                    in_code = not in_code
                if in_code:
                    continue
                for target in LINK.findall(line):
                    if re.match(r"^[a-z]+:", target) or target.startswith("#"):
                        continue
                    file, _, anchor = target.partition("#")
                    dest = os.path.normpath(os.path.join(os.path.dirname(path), file))
                    if not os.path.exists(dest):
                        bad.append(f"{rel}:{n}: {target} (no such file)")
                    elif anchor and dest.endswith(".md") and anchor not in anchors(dest):
                        bad.append(f"{rel}:{n}: {target} (no such heading)")
    return bad


def markdown_files(root):
    files = [f for f in ("README.md", "CHANGELOG.md") if os.path.exists(os.path.join(root, f))]
    for d in ("docs", "bench"):
        folder = os.path.join(root, d)
        if os.path.isdir(folder):
            files += [os.path.join(d, f) for f in sorted(os.listdir(folder)) if f.endswith(".md")]
    return files


def self_test():
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        with open(os.path.join(root, "docs", "a.md"), "w") as f:
            f.write("# A page\n## Its part\n")
        with open(os.path.join(root, "README.md"), "w") as f:
            f.write("[ok](docs/a.md) [ok](docs/a.md#its-part) [url](https://x.y/z)\n"
                    "[gone](docs/b.md) [no heading](docs/a.md#nowhere)\n"
                    "```\n[in code](docs/c.md)\n```\n")
        bad = broken_links(root, markdown_files(root))
        want = ["README.md:2: docs/b.md (no such file)",
                "README.md:2: docs/a.md#nowhere (no such heading)"]
        if bad != want:
            print(f"check_links self-test: got {bad}, want {want}")
            return 1
    print("check_links self-test: both planted broken links flagged, the rest passed")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1]
    files = markdown_files(root)
    bad = broken_links(root, files)
    for b in bad:
        print(b)
    print(f"check_links: {len(bad)} broken link(s) in {len(files)} files")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
