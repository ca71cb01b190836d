"""Compares `parley tokenize` with the Python reference tokenizer (tests/reference/tokenizer.py).

Runs `$PARLEY_BIN tokenize --vocab V --words` on: hand-written tricky sentences (accents,
CJK, Hangul, punctuation, emoji, controls, odd whitespace, long words, mixed scripts);
random strings drawn from many Unicode blocks (fixed seed); invalid UTF-8 (hand cases and
random bytes, where the error must name the byte Python's decoder names); and, when
$PARLEY_SHARED_DATA is there, every line of the SNIPS and ATIS train and dev seq.in files.
The committed tests/nlu/vocab_small.txt (VOCAB) is always used, the standard
bert-base-uncased vocabulary when present. Tokens, ids, word indexes, piece byte ranges
and word byte ranges must all match; any mismatch fails the test.

Known Unicode-version differences (utf8proc 2.8 = Unicode 15.0, Python 3.11 = 14.0) are
kept out by drawing random characters only from those Python knows (category other than
Cn); none are tolerated.

Usage: test_tokenizer_ref.py VOCAB   (PARLEY_BIN names the parley CLI)
"""
import json
import os
import random
import re
import subprocess
import sys
import unicodedata

from reference import tokenizer as ref

SENTENCES = [
    "Hello, world!",
    "unaffable UNAFFABLE Unaffable",
    "Café déjà vu, naïve façade, Ångström, Œuvre, straße STRASSE ẞ",
    "Cafe\u0301 and e\u0301\u0301\u0301 and \u0301\u0301lonely marks",
    "Tiếng Việt có dấu: Hà Nội, Thành phố Hồ Chí Minh",
    "我爱北京天安门。你好，世界！",
    "東京タワーに行きたい 東京tower",
    "한국어 텍스트 처리는 재미있다",
    "\uf900\ufa0e compatibility ideographs \U0002f800",
    "\U00020000\U0002a700 extension ideographs",
    "ΟΔΟΣ Οδός ΣΊΣΥΦΟΣ ὈΔΥΣΣΕΎΣ σς",
    "İstanbul'da ISTANBUL ıi ǅemal ǄEMAL",
    "Привет, мир! Ёлка ёж",
    "مرحبا بالعالم، كيف حالك؟",
    "שָׁלוֹם עוֹלָם",
    "नमस्ते दुनिया। हिन्दी",
    "สวัสดีครับ ภาษาไทย",
    "hello мир世界 mixed-scripts ελληνικά",
    "Hello!!! (test) [x] {y} <z> 'single' \"double\" `back` ~tilde^ |pipe| \\slash/",
    "em—dash en–dash … ellipsis ‹guillemets› «quotes» „low“ 'curly' ‘single’",
    "¿Qué? ¡Sí! ¿¿¡¡",
    "$100.00 3.14 1,000,000 50% #hashtag @user e-mail U.S.A. don't can't",
    "http://example.com/path?query=1&x=y#frag user@example.com",
    "I ❤️ pizza 🍕🍕 👍🏽 👨‍👩‍👧 🇫🇷 ☺ ✓",
    "a\x01b\x7fc\u200bd\ufeffe\u00adf\x85g",
    "ctrl\x00nul \ufffd replacement \ue000private \U000f0000 plane15",
    "tabs\tand\t\tmore\ttabs\r\rcarriage",
    "no\u00a0break\u2003em\u3000ideographic\u2028line\u2029para\u202fnarrow",
    "vertical\x0btab form\x0cfeed unit\x1fsep",
    "   leading and trailing spaces   ",
    "\t",
    "",
    "\x01\x02\x03 only controls \x04",
    "\u0301",
    "fullwidth ＡＢＣ！？ｈｅｌｌｏ",
    "ligature ﬁ ﬂ ﬀ ½ ¼ ² ³ ™ © ® ℃ № Ⅻ ⅻ Ⓐ ⓐ",
    "greek varia \u1fef\u1fed\u1fee and \u037e question",
    "math ∑∫∂√∞≠≤ arrows ←→↑↓ box ─│┌",
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "a" * 99,
    "a" * 100,
    "a" * 101,
    "é" * 100,
    "é" * 101,
    "e\u0301" * 100 + "x",
    "aa " * 40 + "," * 120,
    "word " * 1000,
    "Pneumonoultramicroscopicsilicovolcanoconiosis" * 3,
    "[CLS] [SEP] [MASK] [PAD] [UNK] hello[MASK]world",
    "ᄀᄁ ᅡᅢ ᆨᆩ jamo",
    "Ⓗⓔⓛⓛⓞ 𝐇𝐞𝐥𝐥𝐨 𝕳𝖊𝖑𝖑𝖔",
    "Ꭰ Ꮳ ꭰ cherokee Ⴀ ⴀ Ა ა georgian",
    "ŉ ǰ ΐ ﬓ special casing",
    "play playing played plays replay",
]

INVALID = [
    b"\x80",
    b"ok \xbf",
    b"\xc0\xaf",
    b"abc\xc1\xbf",
    b"\xe0\x80\xaf",
    b"x\xed\xa0\x80y",
    b"\xed\xbf\xbf",
    b"\xf0\x80\x80\xaf",
    b"\xf4\x90\x80\x80",
    b"\xf5\x80\x80\x80",
    b"\xf8\x88\x80\x80\x80",
    b"\xfe\xff",
    b"trunc \xe4\xb8",
    b"trunc \xe4\xb8 mid",
    b"\xf0\x9f\x98",
    b"good \xe4\xb8\xad then \xc3",
    b"\xc3(",
]

# Blocks random characters are drawn from: (first, last, weight).
BLOCKS = [
    (0x20, 0x7E, 30), (0x00, 0x1F, 1), (0x7F, 0x9F, 1), (0xA0, 0x24F, 6), (0x250, 0x2FF, 2),
    (0x300, 0x36F, 3), (0x370, 0x3FF, 3), (0x400, 0x4FF, 3), (0x530, 0x58F, 1),
    (0x590, 0x5FF, 2), (0x600, 0x6FF, 2), (0x900, 0x97F, 2), (0xE00, 0xE7F, 2),
    (0x10A0, 0x10FF, 1), (0x1100, 0x11FF, 2), (0x13A0, 0x13FF, 1), (0x1E00, 0x1EFF, 3),
    (0x1F00, 0x1FFF, 3), (0x2000, 0x206F, 3), (0x2070, 0x218F, 2), (0x2190, 0x22FF, 1),
    (0x2460, 0x24FF, 1), (0x3000, 0x30FF, 3), (0x3400, 0x4DBF, 1), (0x4E00, 0x9FFF, 4),
    (0xAC00, 0xD7A3, 3), (0xE000, 0xF8FF, 1), (0xF900, 0xFAFF, 2), (0xFB00, 0xFDFF, 1),
    (0xFE00, 0xFE6F, 1), (0xFF00, 0xFFEF, 2), (0xFFF0, 0xFFFD, 1), (0x1D400, 0x1D7FF, 1),
    (0x1F300, 0x1FAFF, 3), (0x20000, 0x2A6DF, 1), (0x2F800, 0x2FA1F, 1), (0xE0000, 0xE007F, 1),
]


def random_texts(rng, n):
    weights = [w for _, _, w in BLOCKS]
    out = []
    while len(out) < n:
        chars = []
        for _ in range(rng.randint(1, 30)):
            if rng.random() < 0.15:
                chars.append(" ")
                continue
            lo, hi, _ = rng.choices(BLOCKS, weights)[0]
            c = chr(rng.randint(lo, hi))
            if c != "\n" and unicodedata.category(c) not in ("Cn", "Cs"):
                chars.append(c)
        out.append("".join(chars).encode("utf-8"))
    return out


def random_bytes(rng, n):
    out = []
    for _ in range(n):
        b = bytes(rng.choice((rng.randint(0, 255), rng.randint(0x80, 0xBF), rng.randint(0xC0, 0xF7),
                              rng.randint(0x61, 0x7A), 0x20)) for _ in range(rng.randint(1, 24)))
        out.append(b.replace(b"\n", b" "))
    return out


def run_cli(binary, vocab_path, lines):
    proc = subprocess.run([binary, "tokenize", "--vocab", vocab_path, "--words"], input=b"\n".join(lines) + b"\n",
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600)
    if proc.returncode != 0:
        sys.exit(f"parley tokenize exited {proc.returncode}: {proc.stderr.decode(errors='replace')}")
    out = proc.stdout.decode("utf-8").split("\n")
    if out[-1] == "":
        out.pop()
    if len(out) != len(lines):
        sys.exit(f"parley tokenize gave {len(out)} lines for {len(lines)}")
    return [json.loads(o) for o in out]


KEYS = ("tokens", "ids", "words", "start", "end", "word_start", "word_end")


def compare(name, binary, vocab_path, lines):
    """Returns (lines compared, mismatches) and prints the first few mismatches."""
    vocab, _ = ref.load_vocab(vocab_path)
    got = run_cli(binary, vocab_path, lines)
    bad = 0
    for i, (line, g) in enumerate(zip(lines, got)):
        try:
            want = ref.tokenize(line, vocab)
        except UnicodeDecodeError as e:
            m = re.search(r"at byte (\d+)", g.get("error", ""))
            problem = None if m and int(m.group(1)) == e.start else f"want an error at byte {e.start}, got {g}"
        except ref.ReferenceMismatch as e:
            problem = f"reference inconsistent: {e}"
        else:
            diff = [k for k in KEYS if g.get(k) != want[k]]
            problem = f"differs in {diff}: got {[g.get(k) for k in diff]} want {[want[k] for k in diff]}" if diff \
                else None
        if problem:
            bad += 1
            if bad <= 10:
                print(f"MISMATCH {name} line {i + 1} {line!r}: {problem}")
    print(f"{name}: {len(lines)} lines compared, {bad} mismatches")
    return len(lines), bad


def main():
    binary = os.environ.get("PARLEY_BIN")
    if not binary or not os.path.exists(binary):
        sys.exit("PARLEY_BIN does not name the parley binary")
    if len(sys.argv) != 2:
        sys.exit("usage: test_tokenizer_ref.py VOCAB (tests/nlu/vocab_small.txt)")
    rng = random.Random(20240611)
    hand = [s.encode("utf-8") for s in SENTENCES] + INVALID
    rand_text = random_texts(rng, 3000)
    rand_bytes = random_bytes(rng, 1000)

    vocabs = [("small", sys.argv[1])]
    shared = os.environ.get("PARLEY_SHARED_DATA", "")
    std = os.path.join(shared, "vocab", "bert-base-uncased-vocab.txt")
    if shared and os.path.exists(std):
        vocabs.append(("bert-base-uncased", std))
    else:
        print("standard vocabulary absent: only the small vocabulary is used")

    total = bad = 0
    for vname, vpath in vocabs:
        for what, lines in (("hand", hand), ("random text", rand_text), ("random bytes", rand_bytes)):
            n, b = compare(f"{what} / {vname}", binary, vpath, lines)
            total, bad = total + n, bad + b
    if len(vocabs) > 1:
        for corpus in ("snips", "atis"):
            for split in ("train", "dev"):
                path = os.path.join(shared, "nlu", corpus, split, "seq.in")
                if not os.path.exists(path):
                    print(f"{path} absent: skipped")
                    continue
                with open(path, "rb") as f:
                    lines = f.read().split(b"\n")
                if lines and lines[-1] == b"":
                    lines.pop()
                n, b = compare(f"{corpus}/{split} / bert-base-uncased", binary, std, lines)
                total, bad = total + n, bad + b
    print(f"total: {total} lines compared, {bad} mismatches")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
