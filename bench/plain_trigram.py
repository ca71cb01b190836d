"""plain_trigram.py — the voice issue's reference recognizer, to compare parley's with on the
same audio: pocketsphinx (Debian's python3-pocketsphinx binding, the same en-us acoustic
model) decoding each whole file in batch, so from the whole recording's cepstral mean, with a
plain word trigram language model estimated from the bot's examples, each example repeated
with slot values drawn from its slot's values (lookup tables and the values examples tag).
The trigram is interpolated Kneser-Ney with one discount of 0.75; pronunciations are the
acoustic model's cmudict, and parley's own dictionary of the bot for the words cmudict lacks.
No hesitations, no rejection, no second opinion: what the issue measured on the real
recordings (95.2% of the clean orders accepted, 61% at 6 dB).

bench/voice_coffee.py --reference runs it beside parley's recognizer.
"""
import collections
import math
import os
import random
import re
import wave

import voice_wer as vw

MODEL = "/usr/share/pocketsphinx/model/en-us"
DISCOUNT = 0.75


def sentences(nlu, repeats=20, seed=1):
    """Each example's words, and `repeats` copies of each example with slots with values drawn
    at random from their slot's values."""
    patterns, values, _ = vw.patterns_and_values(nlu)
    g = random.Random(seed)
    out = []
    for _, line, spans in patterns:
        out.append(vw.words(vw.ANN.sub(lambda m: m.group(1), line)))
        for _ in range(repeats if spans else 0):
            out.append(vw.words(vw.ANN.sub(
                lambda m: g.choice(values[m.group(2) or m.group(3)]), line)))
    return out


def _interpolate(counts, lower):
    """Interpolated absolute discounting of `counts` ({context: {word: count}}) onto `lower`
    (a function of (context, word)): the probabilities and each context's back-off weight."""
    probs, backoff = {}, {}
    for ctx, nexts in counts.items():
        total = sum(nexts.values())
        backoff[ctx] = DISCOUNT * len(nexts) / total
        for w, n in nexts.items():
            probs[ctx + (w,)] = max(n - DISCOUNT, 0) / total + backoff[ctx] * lower(ctx, w)
    return probs, backoff


def write_arpa(sents, path):
    """A Kneser-Ney trigram model of the sentences, in ARPA format; its vocabulary."""
    padded = [["<s>"] + s + ["</s>"] for s in sents]
    tri = collections.Counter(tuple(t[i - 2:i + 1]) for t in padded for i in range(2, len(t)))
    bi = collections.Counter(tuple(t[i - 1:i + 1]) for t in padded for i in range(1, len(t)))
    # lower orders count the contexts a word follows (Kneser-Ney); a sentence's first
    # bigram has no context before it, so it keeps its own count
    uni = collections.Counter(b for _, b in bi)
    p1 = {w: n / sum(uni.values()) for w, n in uni.items()}
    bigrams = collections.defaultdict(dict)
    for (_, b, c) in tri:
        bigrams[(b,)][c] = bigrams[(b,)].get(c, 0) + 1
    for (a, b), n in bi.items():
        if a == "<s>":
            bigrams[(a,)][b] = n
    p2, bo1 = _interpolate(bigrams, lambda ctx, w: p1[w])
    trigrams = collections.defaultdict(dict)
    for (a, b, c), n in tri.items():
        trigrams[(a, b)][c] = n
    p3, bo2 = _interpolate(trigrams, lambda ctx, w: p2.get((ctx[1], w), bo1[(ctx[1],)] * p1[w]))
    vocab = sorted(set(p1) | {"<s>"})
    log = math.log10
    with open(path, "w") as f:
        f.write("\\data\\\nngram 1=%d\nngram 2=%d\nngram 3=%d\n\n\\1-grams:\n"
                % (len(vocab), len(p2), len(p3)))
        for w in vocab:
            f.write("%.5f %s %.5f\n" % (log(p1[w]) if w in p1 else -99, w,
                                        log(bo1[(w,)]) if (w,) in bo1 else 0))
        f.write("\n\\2-grams:\n")
        for k, p in sorted(p2.items()):
            f.write("%.5f %s %.5f\n" % (log(p), " ".join(k), log(bo2[k]) if k in bo2 else 0))
        f.write("\n\\3-grams:\n")
        for k, p in sorted(p3.items()):
            f.write("%.5f %s\n" % (log(p), " ".join(k)))
        f.write("\n\\end\\\n")
    return set(vocab) - {"<s>", "</s>"}


def write_dictionary(vocab, parley_dict, path):
    """Every cmudict pronunciation of the vocabulary's words; parley's dictionary of the bot
    (class words named 'word:c_N') for those cmudict lacks."""
    have = set()
    with open(path, "w") as f:
        for src in (os.path.join(MODEL, "cmudict-en-us.dict"), parley_dict):
            found = set()
            for line in open(src):
                name, phones = line.split(None, 1)
                name = name.split(":")[0]
                word = re.sub(r"\(\d+\)$", "", name)
                if word in vocab and word not in have:
                    f.write("%s %s" % (name, phones))
                    found.add(word)
            have |= found
    missing = vocab - have
    if missing:
        raise SystemExit("plain_trigram: no pronunciation of %s" % ", ".join(sorted(missing)))


def decoder(nlu, parley_dict, work):
    """A pocketsphinx decoder of the bot's plain trigram model (files written under work)."""
    from pocketsphinx.pocketsphinx import Decoder
    lm, dic = os.path.join(work, "plain.lm"), os.path.join(work, "plain.dict")
    write_dictionary(write_arpa(sentences(nlu), lm), parley_dict, dic)
    config = Decoder.default_config()
    config.set_string("-hmm", os.path.join(MODEL, "en-us"))
    config.set_string("-lm", lm)
    config.set_string("-dict", dic)
    config.set_string("-logfn", os.devnull)
    return Decoder(config)


def transcribe(dec, files):
    """Each 16 kHz mono WAV decoded whole (the whole file's cepstral mean)."""
    out = []
    for path in files:
        with wave.open(path) as w:
            if w.getframerate() != 16000 or w.getnchannels() != 1:
                raise SystemExit("plain_trigram: %s is not 16 kHz mono" % path)
            audio = w.readframes(w.getnframes())
        dec.start_utt()
        dec.process_raw(audio, False, True)
        dec.end_utt()
        hyp = dec.hyp()
        out.append(hyp.hypstr if hyp else "")
    return out
