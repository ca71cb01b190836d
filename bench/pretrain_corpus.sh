#!/usr/bin/env bash
# pretrain_corpus.sh — builds the unlabeled text `parley pretrain` is measured with, from
# what these machines can obtain: the utterances of ../shared/data without their labels
# and, with --wordnet, the example sentences of WordNet 3.0 (Debian's wordnet-base).
#
#   bash bench/pretrain_corpus.sh [--wordnet] OUT_DIR [SHARED_DATA]
#
# Writes OUT_DIR/corpus.txt (one utterance or sentence per line) and OUT_DIR/SOURCES.txt
# (what each part is, how many lines, and its license). Only training-side text goes in:
# CLINC150's train and val utterances (in and out of scope; CLINC150 is not scored here),
# and the seq.in lines of the SNIPS and ATIS train splits. The SNIPS and ATIS dev splits,
# which the fine-tuned models are scored on, are left out. WordNet's examples are the
# quoted sentences of its glosses ("she dropped the book", tools/wordnet_examples.py):
# 48k short sentences of general English. Nothing here is committed: the corpus is made
# when a benchmark needs it.
set -euo pipefail
wordnet=0
if [ "${1:-}" = --wordnet ]; then wordnet=1; shift; fi
out=${1:?usage: pretrain_corpus.sh [--wordnet] OUT_DIR [SHARED_DATA]}
data=${2:-$(dirname "$0")/../../shared/data}
[ -d "$data/nlu" ] || { echo "pretrain_corpus.sh: no $data/nlu (../shared/data is not here)" >&2; exit 77; }
if ((wordnet)) && [ ! -f /usr/share/wordnet/data.noun ]; then
    echo "pretrain_corpus.sh: --wordnet needs Debian's wordnet-base (apt-get install wordnet-base)" >&2
    exit 1
fi
mkdir -p "$out"
/usr/bin/python3 - "$data/nlu/clinc150/train_val.json" >"$out/clinc150.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
for part in ("train", "val", "oos_train", "oos_val"):
    for text, _intent in d[part]:
        print(" ".join(text.split()))
PY
: >"$out/wordnet.txt"
if ((wordnet)); then
    /usr/bin/python3 "$(dirname "$0")/../tools/wordnet_examples.py" >"$out/wordnet.txt"
fi
cat "$out/clinc150.txt" "$data/nlu/snips/train/seq.in" "$data/nlu/atis/train/seq.in" "$out/wordnet.txt" >"$out/corpus.txt"
{
    echo "corpus.txt, made $(date -u +%F) by bench/pretrain_corpus.sh from $data:"
    echo "  $(wc -l <"$out/clinc150.txt") lines  CLINC150 train+val+oos utterances (github.com/clinc/oos-eval), CC BY 3.0"
    echo "  $(wc -l <"$data/nlu/snips/train/seq.in") lines  SNIPS train seq.in (via JointBERT), data CC0"
    echo "  $(wc -l <"$data/nlu/atis/train/seq.in") lines  ATIS train seq.in (via JointBERT, Apache-2.0; ATIS from LDC)"
    if ((wordnet)); then
        echo "  $(wc -l <"$out/wordnet.txt") lines  WordNet 3.0 gloss examples (Debian wordnet-base), WordNet 3.0 license (Princeton; permissive, notice kept)"
    fi
    echo "Labels are not used; the SNIPS and ATIS dev splits are not included."
} >"$out/SOURCES.txt"
rm "$out/clinc150.txt" "$out/wordnet.txt"
cat "$out/SOURCES.txt"
