"""docs_links.py — the documentation's relative links resolve, and its pages tell no history.

usage: docs_links.py SOURCE_ROOT

Links: every relative Markdown link of README.md, ARCHITECTURE.md, SECURITY.md, docs/*.md and
samples/*/README.md (`[text](path)`, `[text](path#anchor)`, `[text](#anchor)`, images and
`[ref]: path` definitions too) names a file or folder that exists, relative to the page;
where it names an anchor of a Markdown file, the anchor is the GitHub-style id of one of that
file's headings or an `<a id="...">` in it (markdown.py). Links with a scheme (http:, https:,
mailto:, ...) and links in code (blocks or inline) are not checked.

History: README.md and docs/*.md describe parley as it is, so their prose (code left out)
uses none of the phrases of HISTORY below: the passes of a benchmark diary, "before the
issue", "as before", "used to", "no longer needed", "for now", dated measurements, seeds-and-
arrows arithmetic ("92.4 → 96.4"). Each phrase is narrow enough that ordinary wording ("the
forward pass", "no longer than", "is used to parse") does not match.

Prints FILE:LINE and the problem for each, and exits 1 if there is one.
"""

import glob
import os
import re
import sys
from urllib.parse import unquote

from markdown import anchors, prose_lines, strip_inline_code

# [text](target "title") and ![alt](target); the text may hold one level of brackets.
LINK = re.compile(r"!?\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"
                  r"\(\s*(<[^>]*>|[^)\s]*)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REF_DEF = re.compile(r" {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")

ORDINAL = ("first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|"
           "twelfth|thirteenth|fourteenth|fifteenth|sixteenth|seventeenth|eighteenth|"
           "nineteenth|twentieth|\\d+(?:st|nd|rd|th)")
HISTORY = [(re.compile(p, re.I), what) for p, what in [
    (r"\bpass(?:es)? \d+\b", "a numbered pass"),
    (r"\b(?:%s)(?:(?:\s+(?:to|and|or)\s+|\s*[-,]\s*)(?:%s))* pass(?:es)?\b" % (ORDINAL, ORDINAL),
     "a numbered pass"),
    (r"\bbefore (?:the|this|that) (?:issue|change|rewrite)\b", "before the issue"),
    (r"\b(?:the|this|that) issue\b", "the issue"),
    (r"\b(?:as|of|from|than) before\b", "as/of/from before"),
    (r"(?<!\bis )(?<!\bare )(?<!\bbe )(?<!\bbeen )(?<!\bbeing )(?<!\bwas )(?<!\bwere )"
     r"(?<!\bget )(?<!\bgets )\bused to\b", "used to"),
    (r"\b(?:is|are|was|were) no longer\b(?! than)", "no longer"),
    (r"\bno longer (?:needed|necessary|required|supported|the default|used|exists?|works?"
     r"|applies|happens|matters)\b", "no longer"),
    (r"\bfor now\b", "for now"),
    (r"\buntil now\b", "until now"),
    (r"\b(?:the )?defaults? now\b|\bnow (?:the )?default\b"
     r"|\b(?:it|this|that|which|they|parley) (?:is|are) now\b", "now"),
    (r"\b(?:previously|formerly|anymore)\b", "previously/formerly/anymore"),
    (r"\bmeasured (?:on )?\d{4}-\d{2}-\d{2}\b|\b(?:19|20)\d\d-\d\d-\d\d\b", "a date"),
    (r"\b\d(?:[\d.,]*\d)?%?\s*(?:→|->)\s*[-+]?\d(?:[\d.,]*\d)?%?", "an arrow between figures"),
]]


def pages(root):
    """The pages whose links are checked, and whether each is held to HISTORY."""
    out = []
    for name in ("README.md", "ARCHITECTURE.md", "SECURITY.md"):
        out.append((name, name == "README.md"))
    out += [(os.path.join("docs", os.path.basename(p)), True)
            for p in sorted(glob.glob(os.path.join(root, "docs", "*.md")))]
    out += [(os.path.relpath(p, root), False)
            for p in sorted(glob.glob(os.path.join(root, "samples", "*", "README.md")))]
    return [(rel, hist) for rel, hist in out if os.path.isfile(os.path.join(root, rel))]


def targets(line):
    """The link targets of one prose line (inline code already blanked)."""
    for m in LINK.finditer(line):
        yield m.group(2)
    m = REF_DEF.match(line)
    if m:
        yield m.group(1)


def check_link(root, rel, target, ids):
    """The problem with one link target of page `rel`, or None."""
    target = target[1:-1] if target.startswith("<") and target.endswith(">") else target
    if not target or SCHEME.match(target):
        return None  # not a relative link
    path, _, anchor = target.partition("#")
    path = unquote(path)
    page_dir = os.path.dirname(os.path.join(root, rel))
    dest = os.path.normpath(os.path.join(page_dir, path)) if path else os.path.join(root, rel)
    if not os.path.exists(dest):
        return "%s: no such file" % target
    if anchor and dest.endswith(".md") and os.path.isfile(dest):
        if dest not in ids:
            ids[dest] = anchors(dest)
        if unquote(anchor) not in ids[dest]:
            return "%s: %s has no heading with anchor #%s" % (
                target, os.path.relpath(dest, root), anchor)
    return None


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = os.path.abspath(sys.argv[1])
    problems, n_links, ids = [], 0, {}
    checked = pages(root)
    for rel, hist in checked:
        for n, line in prose_lines(os.path.join(root, rel)):
            prose = strip_inline_code(line)
            for target in targets(prose):
                n_links += not SCHEME.match(target.lstrip("<"))
                bad = check_link(root, rel, target, ids)
                if bad:
                    problems.append("%s:%d: link %s" % (rel, n, bad))
            if hist:
                for pattern, what in HISTORY:
                    m = pattern.search(prose)
                    if m:
                        problems.append("%s:%d: history (%s): \"%s\"" % (rel, n, what, m.group(0)))
    for p in problems:
        print(p)
    print("%d pages, %d relative or anchor links checked, %d problems"
          % (len(checked), n_links, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
