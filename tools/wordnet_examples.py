#!/usr/bin/env python3
"""wordnet_examples.py — prints the example sentences of WordNet 3.0's glosses, one a line
("she dropped the book"): 48,339 short sentences of general English, from the data files of
Debian's wordnet-base (/usr/share/wordnet/data.{noun,verb,adj,adv}, WordNet 3.0 license).
tools/encoder.sh pretrains the default encoder on them; bench/pretrain_corpus.sh --wordnet
adds them to its corpus.

With --background N it prints instead N of them that read like something a user might say
to a bot it was not made for: whole sentences of 3 to 12 plain words (letters and
apostrophes), lowercased, in an order shuffled with seed 1. tools/encoder.sh writes them
beside the default encoder, where `parley train` finds its background sentences
(nlu/train/background.h).

    python3 tools/wordnet_examples.py [--background N] [WORDNET_DIR] > examples.txt
"""
import argparse
import os
import random
import re


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
    plain = sorted({e.lower() for e in examples(args.folder)
                    if re.fullmatch(r"[A-Za-z' ]+", e) and 3 <= len(e.split()) <= 12})
    random.Random(1).shuffle(plain)
    print("\n".join(plain[:args.background]))


if __name__ == "__main__":
    main()
