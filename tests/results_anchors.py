"""results_anchors.py — every anchor of bench/RESULTS.md or bench/HISTORY.md cited in the
repository resolves to a heading of that file.

usage: results_anchors.py SOURCE_ROOT

Code, tests and docs cite the benchmark figures as `bench/RESULTS.md#ANCHOR` (continued as
"and #ANCHOR"), and nlu/train/recipe.c names the evidence of each rule by its anchor alone
(printed as bench/RESULTS.md#ANCHOR by `parley train --explain`). An anchor resolves when it is
the GitHub-style id of a heading of the file (lower case, spaces to '-', punctuation dropped,
a repeated heading's id suffixed -1, -2, ...) or an `<a id="...">` in it. The two files' own
links to themselves (`](#anchor)`) are held to the same rule. Prints each anchor that does not
resolve with where it is cited, and exits 1 if there is one.
"""

import os
import re
import sys

from markdown import anchors

SKIP_DIRS = {".git", "node_modules", "__pycache__"}
CITE = re.compile(r"(RESULTS|HISTORY)\.md#([A-Za-z0-9_-]+)")
# "bench/RESULTS.md#a and #b", also across a comment's line break (" *").
MORE = re.compile(r"\A(?:[\s*/#]*?(?:and|,|or)\s*(?:\*\s*)?#([A-Za-z0-9_-]+))")
RECIPE_EVIDENCE = re.compile(r',\s*"([a-z0-9-]+)"\s*\},')
SELF_LINK = re.compile(r"\]\(#([^)\s]+)\)")


def source_files(root):
    build_dirs = set()
    for dirpath, dirnames, filenames in os.walk(root):
        if "meson-private" in dirnames or "build.ninja" in filenames:
            build_dirs.add(dirpath)
            dirnames[:] = []
            continue
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS]
        for name in filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path) or os.path.getsize(path) > 4 << 20:
                continue
            yield path


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = sys.argv[1]
    files = {
        "RESULTS": os.path.join(root, "bench", "RESULTS.md"),
        "HISTORY": os.path.join(root, "bench", "HISTORY.md"),
    }
    ids = {k: anchors(p) for k, p in files.items()}
    cited = []  # (file key, anchor, where)
    for path in source_files(root):
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        rel = os.path.relpath(path, root)
        if os.path.abspath(path) == os.path.abspath(__file__):
            continue  # this file's examples
        for m in CITE.finditer(text):
            line = text.count("\n", 0, m.start()) + 1
            cited.append((m.group(1), m.group(2), "%s:%d" % (rel, line)))
            rest = text[m.end():]
            while True:
                more = MORE.match(rest)
                if not more:
                    break
                cited.append((m.group(1), more.group(1), "%s:%d" % (rel, line)))
                rest = rest[more.end():]
        if rel == os.path.join("nlu", "train", "recipe.c"):
            for m in RECIPE_EVIDENCE.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                cited.append(("RESULTS", m.group(1), "%s:%d (evidence)" % (rel, line)))
        if path in files.values():
            key = [k for k, p in files.items() if p == path][0]
            for m in SELF_LINK.finditer(text):
                line = text.count("\n", 0, m.start()) + 1
                cited.append((key, m.group(1), "%s:%d" % (rel, line)))
    bad = [(k, a, w) for k, a, w in cited if a not in ids[k]]
    for k, a, w in bad:
        print("%s: bench/%s.md#%s names no heading" % (w, k, a))
    n_recipe = sum(1 for _, _, w in cited if w.endswith("(evidence)"))
    print("%d citations (%d of them recipe.c's evidence), %d distinct anchors, %d unresolved"
          % (len(cited), n_recipe, len({(k, a) for k, a, _ in cited}), len(bad)))
    if n_recipe == 0:
        print("nlu/train/recipe.c: no evidence anchor found (has the table's form changed?)")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
