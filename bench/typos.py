#!/usr/bin/python3
"""typos.py — a copy of an annotated nlu.yaml with one typing slip in each long slot value.

For robustness figures: how a model reads the slot values its users mistype. In each
`[value](slot)` of the file the longest word, when it is of 5 letters or more, loses its
second-to-last letter ("mushrooms" -> "mushroos", "extra cheese" -> "extra cheee"); shorter
values and values with digits stay as written, as does everything outside the brackets. The
slip is fixed, not drawn, so every run and every model reads the same file.

  /usr/bin/python3 bench/typos.py samples/pizza/test_nlu.yaml /tmp/test_typos.yaml
  parley eval --model MODEL --data /tmp/test_typos.yaml

It prints how many values it changed.
"""
import re
import sys

MIN_LETTERS = 5


def slip(match):
    """The [value](slot) of match with its longest word mistyped, where it is long enough."""
    value, slot = match.group(1), match.group(2)
    words = value.split(" ")
    longest = max(range(len(words)), key=lambda i: len(words[i]))
    word = words[longest]
    if len(word) < MIN_LETTERS or not word.isalpha():
        return match.group(0)
    words[longest] = word[:-2] + word[-1]
    slip.changed += 1
    return "[" + " ".join(words) + "](" + slot + ")"


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: typos.py IN.yaml OUT.yaml")
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    slip.changed = 0
    out = re.sub(r"\[([^\]\n]+)\]\(([^)\n]+)\)", slip, text)
    with open(sys.argv[2], "w", encoding="utf-8") as f:
        f.write(out)
    print(f"{slip.changed} slot values mistyped")


if __name__ == "__main__":
    main()
