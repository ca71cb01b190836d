"""Reference BERT uncased tokenizer (BasicTokenizer + WordPiece) with byte offsets.

An independent Python implementation of the algorithm nlu/text/tokenizer.c implements, built on
Python's own Unicode database (unicodedata, str.lower, str.split) instead of utf8proc, for
tests to compare against. It is slow and simple on purpose. Not used by the library.

Two views of the same text are computed and checked against each other:
  * basic_tokens_hf() follows Hugging Face's BertTokenizer(do_lower_case=True) step by step
    on whole strings: per-character lower-casing (PreTrainedTokenizer.tokenize lowers each
    character on its own before the BasicTokenizer), clean-up, spaces around CJK
    ideographs, str.split(), lower(), NFD, dropping category Mn, punctuation split;
  * tokenize() does the same per source character, so every normalized character knows
    the bytes it came from, then runs WordPiece and reports offsets.
When the two disagree on the basic tokens (possible only with canonical reordering of
combining marks), tokenize() raises ReferenceMismatch instead of guessing.

Offsets follow parley's rules: a piece covers the bytes of the source characters of its
characters; a source character that yields no character (removed control, combining mark)
extends the range of the character before it in the same word; [UNK] covers its whole
basic token. Words are the runs of characters between whitespace as BERT sees it (a
removed control character does not split words).
"""
import unicodedata

MAX_WORD_CHARS = 100
UNK = "[UNK]"
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class ReferenceMismatch(Exception):
    """The per-character view disagrees with the whole-string one."""


def load_vocab(path):
    """Returns (token -> id, list of tokens). One token per line; "\\r\\n" ends a line too."""
    with open(path, "rb") as f:
        lines = f.read().decode("utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    tokens = [t[:-1] if t.endswith("\r") else t for t in lines]
    vocab = {}
    for i, t in enumerate(tokens):
        if not t or t in vocab:
            raise ValueError(f"{path}:{i + 1}: empty or duplicate token")
        vocab[t] = i
    for s in SPECIALS:
        if s not in vocab:
            raise ValueError(f"{path}: missing {s}")
    return vocab, tokens


# Character classes, as BERT's tokenization.py defines them.
def is_bert_whitespace(ch):
    return ch in " \t\n\r" or unicodedata.category(ch) == "Zs"


def is_removed(ch):
    if ch in "\t\n\r":
        return False
    return ord(ch) in (0, 0xFFFD) or unicodedata.category(ch).startswith("C")


def is_punctuation(ch):
    cp = ord(ch)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(ch).startswith("P")


CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F),
              (0x2B740, 0x2B81F), (0x2B820, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def is_cjk(ch):
    cp = ord(ch)
    return any(lo <= cp <= hi for lo, hi in CJK_RANGES)


def is_separator(ch):
    """Splits words: what survives clean-up as whitespace, or what str.split() splits on."""
    return not is_removed(ch) and (is_bert_whitespace(ch) or ch.isspace())


def strip_accents(s):
    return "".join(c for c in unicodedata.normalize("NFD", s) if unicodedata.category(c) != "Mn")


def split_punctuation(s):
    out, cur = [], ""
    for c in s:
        if is_punctuation(c):
            if cur:
                out.append(cur)
            out.append(c)
            cur = ""
        else:
            cur += c
    if cur:
        out.append(cur)
    return out


def basic_tokens_hf(text):
    """The basic tokens of `text` (str), by HF's whole-string steps."""
    text = "".join(c.lower() for c in text)
    text = "".join(" " if is_bert_whitespace(c) else c for c in text if not is_removed(c))
    text = "".join(f" {c} " if is_cjk(c) else c for c in text)
    out = []
    for tok in text.split():
        out.extend(split_punctuation(strip_accents(tok.lower())))
    return out


def wordpiece(chars, vocab):
    """Greedy longest-match-first over a list of characters: [(token, first, end)] or None."""
    out, start = [], 0
    while start < len(chars):
        end = len(chars)
        while end > start:
            sub = "".join(chars[start:end])
            if start > 0:
                sub = "##" + sub
            if sub in vocab:
                break
            end -= 1
        if end == start:
            return None
        out.append((sub, start, end))
        start = end
    return out


def tokenize(data, vocab):
    """Tokenizes `data` (bytes, valid UTF-8). Returns a dict shaped like `parley tokenize
    --words` output: tokens, ids, words, start, end, word_start, word_end."""
    text = data.decode("utf-8")
    # Source characters with their bytes and word index (None for separators).
    src, pos, word, in_word = [], 0, -1, False
    for ch in text:
        n = len(ch.encode("utf-8"))
        sep = is_separator(ch)
        if not sep and not in_word:
            word += 1
        in_word = not sep
        src.append((ch, pos, pos + n, None if sep else word))
        pos += n
    word_start = [None] * (word + 1)
    word_end = [None] * (word + 1)
    for ch, s, e, w in src:
        if w is not None:
            if word_start[w] is None:
                word_start[w] = s
            word_end[w] = e

    # Normalized characters of each word: [char, start, end, alone], alone = own basic token.
    words = [[] for _ in range(word + 1)]
    for ch, s, e, w in src:
        if w is None:
            continue
        made = []
        for low in ch.lower():
            if is_removed(low):
                continue
            for c in strip_accents(low):
                made.append([c, s, e, is_cjk(low) or is_punctuation(c)])
        if made:
            words[w].extend(made)
        elif words[w]:
            words[w][-1][2] = e

    out = {k: [] for k in ("tokens", "ids", "words", "start", "end")}
    basic = []
    for w, chars in enumerate(words):
        groups, cur = [], []
        for item in chars:
            if item[3]:
                if cur:
                    groups.append(cur)
                groups.append([item])
                cur = []
            else:
                cur.append(item)
        if cur:
            groups.append(cur)
        for g in groups:
            letters = [item[0] for item in g]
            basic.append("".join(letters))
            pieces = wordpiece(letters, vocab) if len(letters) <= MAX_WORD_CHARS else None
            if pieces is None:
                pieces = [(UNK, 0, len(g))]
            for tok, a, b in pieces:
                out["tokens"].append(tok)
                out["ids"].append(vocab[tok])
                out["words"].append(w)
                out["start"].append(g[a][1])
                out["end"].append(g[b - 1][2])
    if basic != basic_tokens_hf(text):
        raise ReferenceMismatch(f"basic tokens {basic} != HF's {basic_tokens_hf(text)}")
    out["word_start"] = word_start
    out["word_end"] = word_end
    return out
