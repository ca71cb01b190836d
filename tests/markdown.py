"""markdown.py — what the layout tests read of a Markdown file: its prose lines (code blocks
left out) and the anchors its headings define, as GitHub renders them.

Imported by results_anchors.py and docs_links.py (both run from tests/, so `import markdown`
finds this file).
"""

import re

HEADING = re.compile(r" {0,3}(#{1,6})\s+(.*?)(?:\s+#+)?\s*$")
ANCHOR_TAG = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")
FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
LIST_ITEM = re.compile(r" {0,3}(?:[-*+]|\d{1,9}[.)])(?:\s|$)")
INLINE_CODE = re.compile(r"(`+)(?!`)(.+?)(?<!`)\1(?!`)")


def slug(text):
    """GitHub's id for a heading's text: lower case, inline HTML and link targets dropped,
    everything but letters, digits, spaces, '-' and '_' dropped, spaces to '-'."""
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)  # links keep their text
    text = text.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)  # punctuation dropped (letters, digits, _ and - kept)
    return text.replace(" ", "-")


def prose_lines(path):
    """(line number, line) of each line of a Markdown file outside its code blocks: fenced
    (``` or ~~~, closed by a fence of the same character at least as long) and indented
    (four spaces or a tab after a blank line, outside a list). The lines keep their newline
    stripped and their inline code."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    fence = None  # the opening fence's characters while inside a fenced block
    indented = False  # inside an indented code block
    blank_before = True
    in_list = False  # the last paragraph was a list item or its continuation
    for n, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and not line[m.end():].strip():
                fence = None
            continue
        if m:
            fence = m.group(1)
            indented = False
            continue
        blank = not line.strip()
        code_indent = line.startswith("    ") or line.startswith("\t")
        if indented and (blank or code_indent):
            blank_before = blank
            continue
        indented = False
        if code_indent and blank_before and not in_list:
            indented = True
            continue
        if not blank:
            if LIST_ITEM.match(line):
                in_list = True
            elif not line.startswith(" ") and blank_before:
                in_list = False
        blank_before = blank
        yield n, line


def strip_inline_code(line):
    """The line with each inline code span blanked (its length kept)."""
    return INLINE_CODE.sub(lambda m: " " * len(m.group(0)), line)


def anchors(path):
    """The ids a Markdown file defines: its headings' (a repeated heading's id suffixed -1,
    -2, ...) and its <a id/name>s."""
    ids, seen = set(), {}
    for _, line in prose_lines(path):
        for m in ANCHOR_TAG.finditer(line):
            ids.add(m.group(1))
        m = HEADING.match(line)
        if m:
            base = slug(m.group(2))
            n = seen.get(base, 0)
            ids.add(base if n == 0 else "%s-%d" % (base, n))
            seen[base] = n + 1
    return ids
