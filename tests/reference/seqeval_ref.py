"""seqeval_ref.py — an independent scorer for joint intent/slot predictions, in plain Python.

It is the reference nlu/data/metrics.c is checked against (tests/nlu/data/test_metrics_ref.py), so it
is written from the definitions, not from the C code:

- Chunks follow conlleval, as seqeval computes them in its default (non-strict) mode. The
  decision at each word is a pure function of the previous tag and the current one, the way
  conlleval.pl's endOfChunk/startOfChunk are written: a chunk ends before this word when the
  previous tag was inside a chunk (B or I) and this one is O, B, or of another type; a chunk
  starts here at B, or at I when the previous tag was O or of another type.
- Slot precision/recall/F1 are micro-averaged over chunks (type, start, end); a predicted
  chunk is correct only when a gold chunk has the same type and both boundaries.
- Sentence accuracy is JointBERT's semantic frame accuracy: intent right and the tag
  sequence equal to the gold one.
- A ratio with a zero denominator is 0.
"""


def split_tag(tag):
    """("O", "") for O, ("B", type) or ("I", type) for B-type / I-type."""
    if tag == "O":
        return "O", ""
    prefix, sep, typ = tag.partition("-")
    if prefix not in ("B", "I") or sep != "-" or not typ:
        raise ValueError("not a BIO tag: %r" % tag)
    return prefix, typ


def _ends_before(prev, cur):
    (pp, pt), (cp, ct) = prev, cur
    return pp != "O" and (cp in ("O", "B") or ct != pt)


def _starts_at(prev, cur):
    (pp, pt), (cp, ct) = prev, cur
    return cp == "B" or (cp == "I" and (pp == "O" or pt != ct))


def chunks(tags):
    """The chunks of one tag sequence as a list of (type, start, end), end exclusive."""
    parsed = [split_tag(t) for t in tags] + [("O", "")]
    out = []
    prev = ("O", "")
    start = None
    for i, cur in enumerate(parsed):
        if _ends_before(prev, cur):
            out.append((prev[1], start, i))
            start = None
        if _starts_at(prev, cur):
            start = i
        prev = cur
    return out


def _ratio(num, den):
    return num / den if den else 0.0


def prf(support, predicted, correct):
    p = _ratio(correct, predicted)
    r = _ratio(correct, support)
    f = 2 * p * r / (p + r) if p + r > 0 else 0.0
    return {"precision": p, "recall": r, "f1": f, "support": support, "predicted": predicted,
            "correct": correct}


def score(examples):
    """examples: iterable of (gold_intent, pred_intent, gold_tags, pred_tags).

    Returns a dict shaped like metrics.c's JSON (confusions as {(gold, pred): count})."""
    n = intent_ok = sentence_ok = n_tags = tags_ok = 0
    intent_counts = {}  # label -> [support, predicted, correct]
    slot_counts = {}
    intent_conf = {}
    slot_conf = {}
    total_gold = total_pred = total_ok = 0

    def bump(table, key, field):
        table.setdefault(key, [0, 0, 0])[field] += 1

    for gi, pi, gt, pt in examples:
        assert len(gt) == len(pt)
        n += 1
        bump(intent_counts, gi, 0)
        bump(intent_counts, pi, 1)
        same_tags = list(gt) == list(pt)
        n_tags += len(gt)
        tags_ok += sum(1 for a, b in zip(gt, pt) if a == b)
        if gi == pi:
            intent_ok += 1
            bump(intent_counts, gi, 2)
            sentence_ok += same_tags
        else:
            intent_conf[(gi, pi)] = intent_conf.get((gi, pi), 0) + 1

        gold = {(s, e): t for t, s, e in chunks(gt)}
        pred = {(s, e): t for t, s, e in chunks(pt)}
        total_gold += len(gold)
        total_pred += len(pred)
        for span, t in gold.items():
            bump(slot_counts, t, 0)
        for span, t in pred.items():
            bump(slot_counts, t, 1)
        for span in set(gold) | set(pred):
            g, p = gold.get(span, "O"), pred.get(span, "O")
            if g == p:
                bump(slot_counts, g, 2)
                total_ok += 1
            else:
                slot_conf[(g, p)] = slot_conf.get((g, p), 0) + 1

    return {
        "examples": n,
        "intent_accuracy": _ratio(intent_ok, n),
        "intent_correct": intent_ok,
        "sentence_accuracy": _ratio(sentence_ok, n),
        "sentence_correct": sentence_ok,
        "tag_accuracy": _ratio(tags_ok, n_tags),
        "tags": n_tags,
        "tags_correct": tags_ok,
        "slots": prf(total_gold, total_pred, total_ok),
        "intents": {k: prf(*v) for k, v in intent_counts.items()},
        "slot_types": {k: prf(*v) for k, v in slot_counts.items()},
        "intent_confusions": intent_conf,
        "slot_confusions": slot_conf,
    }
