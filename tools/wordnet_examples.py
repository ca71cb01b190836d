#!/usr/bin/env python3
"""wordnet_examples.py — prints the example sentences of WordNet 3.0's glosses, one a line
("she dropped the book"): 48,339 short sentences of general English, from the data files of
Debian's wordnet-base (/usr/share/wordnet/data.{noun,verb,adj,adv}, WordNet 3.0 license).
tools/encoder.sh pretrains the default encoder on them; bench/pretrain_corpus.sh --wordnet
adds them to its corpus.

With --background N it prints instead N of them that read like something a user might say
to a bot it was not made for: whole sentences of 3 to 12 plain words (letters and
apostrophes), lowercased, a closing "?" or "!" dropped (a bot's examples seldom have them).
Questions, commands (the "!" ones) and statements are shuffled apart with seed 1 and taken
in turn (TURN): one line in twelve is a question and one a command, while they last (437
and 275 of them; 36,326 statements). Requests that a bot does not serve are mostly
questions ("what do geese eat") and commands; statements alone taught the bots to take
them for their own questions (bench/HISTORY.md, few-shot, twelfth pass). More of them cost
the bots' own short replies ("catch you another time"). tools/encoder.sh writes them
beside the default encoder, where `parley train` finds its background sentences
(nlu/train/background.h).

    python3 tools/wordnet_examples.py [--background N] [WORDNET_DIR] > examples.txt
"""
import argparse
import os
import random
import re

# The background's kinds, by the mark that closes them, and how many of each it takes in
# turn: a question, a command, then ten statements.
TURN = (("?", 1), ("!", 1), ("", 10))


def examples(folder):
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(folder, "data." + pos), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  ") or "|" not in line:  # the license header; no gloss
                    continue
                for example in re.findall(r'"([^"]+)"', line.split("|", 1)[1]):
                    yield " ".join(example.split())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folder", nargs="?", default="/usr/share/wordnet")
    ap.add_argument("--background", type=int, metavar="N")
    args = ap.parse_args()
    if args.background is None:
        for e in examples(args.folder):
            print(e)
        return
    kinds = {end: set() for end, _ in TURN}
    for e in examples(args.folder):
        end = e[-1] if e[-1] in "?!" else ""
        words = e[:len(e) - len(end)].lower().split()
        if re.fullmatch(r"[a-z' ]+", " ".join(words)) and 3 <= len(words) <= 12:
            kinds[end].add(" ".join(words))
    pools = {end: sorted(kinds[end]) for end in kinds}
    for pool in pools.values():
        random.Random(1).shuffle(pool)
    mixed = []
    while len(mixed) < args.background and any(pools.values()):
        for end, count in TURN:
            mixed += pools[end][:count]
            del pools[end][:count]
    print("\n".join(mixed[:args.background]))


if __name__ == "__main__":
    main()
