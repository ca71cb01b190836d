#!/usr/bin/env python3
"""wordnet_examples.py — prints the example sentences of WordNet 3.0's glosses, one a line
("she dropped the book"): 48,339 short sentences of general English, from the data files of
Debian's wordnet-base (/usr/share/wordnet/data.{noun,verb,adj,adv}, WordNet 3.0 license).
tools/encoder.sh pretrains the default encoder on them; bench/pretrain_corpus.sh --wordnet
adds them to its corpus.

    python3 tools/wordnet_examples.py [WORDNET_DIR] > examples.txt
"""
import os
import re
import sys


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet"
    for pos in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(folder, "data." + pos), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  ") or "|" not in line:  # the license header; no gloss
                    continue
                for example in re.findall(r'"([^"]+)"', line.split("|", 1)[1]):
                    print(" ".join(example.split()))


if __name__ == "__main__":
    main()
