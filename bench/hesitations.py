#!/usr/bin/python3
"""hesitations.py — a copy of an annotated nlu.yaml with the hesitations people say in it.

For robustness figures: how a model reads a request with "um" and "uh" in it, as a
transcript from another recognizer or a typed message can have them (parley's own
recognizer leaves them out). Each example gets "um" before its first word and "uh" before
its first slot value (before its second word when it has none); the rest stays as written.
The places are fixed, not drawn, so every run and every model reads the same file.

  /usr/bin/python3 bench/hesitations.py samples/pizza/test_nlu.yaml /tmp/test_um.yaml
  parley eval --model MODEL --data /tmp/test_um.yaml

It prints how many examples it changed.
"""
import re
import sys

EXAMPLE = re.compile(r"^(\s*- )(.*)$")


def hesitate(text):
    """text with "um" before it and "uh" before its first slot value or second word."""
    at = text.find("[")
    if at < 0:
        words = text.split(" ")
        if len(words) < 2:
            return "um " + text
        at = len(words[0]) + 1
    return "um " + text[:at] + "uh " + text[at:]


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: hesitations.py IN.yaml OUT.yaml")
    out, changed, block = [], 0, None  # block: the indent of the "examples:" being read
    with open(sys.argv[1], encoding="utf-8") as f:
        for line in f:
            indent = len(line) - len(line.lstrip(" "))
            if line.strip() and block is not None and indent <= block:
                block = None
            if line.strip().startswith("examples:"):
                block = indent
            m = EXAMPLE.match(line.rstrip("\n"))
            if block is not None and indent > block and m and m.group(2).strip():
                line = m.group(1) + hesitate(m.group(2)) + "\n"
                changed += 1
            out.append(line)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.writelines(out)
    print("%d examples with hesitations" % changed)


if __name__ == "__main__":
    main()
