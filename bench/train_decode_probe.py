#!/usr/bin/python3
"""train_decode_probe.py — how much BIO-constrained Viterbi decoding would add to slot F1.

parley decodes slots by taking each word's most probable tag (its first piece's argmax) and
then repairing BIO (nlu/decode.h). This probe runs a trained model directory through the
PyTorch reference (tests/reference/bert_ref.py) on a JointBERT folder and scores two
decodings of the same slot log-probabilities with the independent scorer
(tests/reference/seqeval_ref.py):
  - argmax: what parley does today (its slot F1 must match `parley eval`'s, a check on the
    probe; sentence accuracy here compares raw tags, parley eval the BIO-repaired ones);
  - viterbi: the best tag path under BIO's constraint (I-x only after B-x or I-x).
It changes nothing in parley; it measures whether the decoder is worth changing.

    /usr/bin/python3 bench/train_decode_probe.py MODEL_DIR ../shared/data/nlu/snips/dev
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, HERE)

from nlu_vs_torch import blas_core  # noqa: E402,F401  (sets OPENBLAS_CORETYPE before torch)

import numpy as np  # noqa: E402
import torch  # noqa: E402

from reference import bert_ref, seqeval_ref, tokenizer  # noqa: E402


def allowed_transitions(tags):
    """(NS + 1, NS) booleans: row NS is the start of the sentence."""
    ns = len(tags)
    ok = np.ones((ns + 1, ns), bool)
    for j, t in enumerate(tags):
        if t.startswith("I-"):
            for i in range(ns + 1):
                prev = tags[i] if i < ns else "O"
                ok[i, j] = prev != "O" and prev[2:] == t[2:]
    return ok


def viterbi(rows, ok):
    ns = rows.shape[1]
    penalty = np.where(ok[:ns], 0.0, -1e18)
    score = np.where(ok[ns], rows[0], -1e18)
    back = []
    for r in rows[1:]:
        cand = score[:, None] + penalty
        back.append(cand.argmax(0))
        score = cand.max(0) + r
    path = [int(score.argmax())]
    for b in reversed(back):
        path.append(int(b[path[-1]]))
    return path[::-1]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    model_dir, data = sys.argv[1:]
    model = bert_ref.load(model_dir, dtype=torch.float32)
    vocab, _ = tokenizer.load_vocab(os.path.join(model_dir, "vocab.txt"))
    tags, intents = model.config.slot_labels, model.config.intent_labels
    ok = allowed_transitions(tags)
    o_row = np.where(np.array(tags) == "O", 0.0, -1e9)
    room = model.config.max_positions - 2

    def lines(name):
        with open(os.path.join(data, name), encoding="utf-8") as f:
            return f.read().splitlines()
    scored = {"argmax": [], "viterbi": []}
    for text, gold, label in zip(lines("seq.in"), lines("seq.out"), lines("label")):
        words = text.split()
        tk = tokenizer.tokenize(" ".join(words).encode("utf-8"), vocab)
        ids = [vocab["[CLS]"]] + tk["ids"][:room] + [vocab["[SEP]"]]
        first = {}
        for k, w in enumerate(tk["words"][:room]):
            first.setdefault(w, k + 1)
        with torch.no_grad():
            il, sl = model(torch.tensor([ids]), torch.ones(1, len(ids), dtype=torch.long))
        logp = torch.log_softmax(sl[0], -1).numpy()
        rows = np.stack([logp[first[w]] if w in first else o_row for w in range(len(words))])
        intent = intents[int(il[0].argmax())]
        scored["argmax"].append((label, intent, gold.split(), [tags[int(r.argmax())] for r in rows]))
        scored["viterbi"].append((label, intent, gold.split(), [tags[k] for k in viterbi(rows, ok)]))
    for name, ex in scored.items():
        r = seqeval_ref.score(ex)
        print(f"{name:8} intent {100 * r['intent_accuracy']:.2f}%  slot F1 {100 * r['slots']['f1']:.2f}%  "
              f"sentence {100 * r['sentence_accuracy']:.2f}%  ({len(ex)} examples)")


if __name__ == "__main__":
    main()
