"""test_asr.py — `parley asr build` and `parley asr transcribe`, and audio.gst's errors.

build: the language model of both sample bots is built: by default a class trigram model
(a well-formed ARPA file whose unigrams sum to 1 and whose every history's next words sum to
1 or a little less, class tags defined in its class file, a dictionary of exactly its words
and class members, hesitations that skip: p(c | b um) = p(c | b), a slot beside another that
may be left out: the word after the pair follows the first alone, but not in a list of
things, a card game's "[rank] of [suit] [rank] of [suit]"), with --grammar a JSGF grammar (sentence
patterns, slot classes); found in the cache the second time, and built anew when nlu.yaml
changes; a broken nlu.yaml is an error naming FILE:LINE:COL. transcribe: real recorded
speech (pocketsphinx-testdata's goforward.raw, "go forward ten meters") with the generic
model; pizza orders synthesized here by flite (four voices), half of them phrasings no
example has, through the class model (7 of 8 exact, slot values as the examples write them:
"12 baker street") and the grammar (fewer), and by festival's HTS voice (a statistical
parametric voice, nearer a person's than the diphone voices; 4 of 4 exact); a cafe bot's words that the dictionary lacks,
pronounced from their spelling and heard (5 of 6 orders exact); every pronunciation the
dictionary has, where its order parts a word's lines ("a", "can"); the bot's own pronunciations
(--lexicon: first, the dictionary's or the spelling's after, bad lines naming FILE:LINE; "grande" said as
coffee shops say it heard with them, 5 of 6 at least, and 2 at most without); orders with "um" or "uh"
in them, by eight voices of three engines (8 of 10 exact at least, without the "um"); slot
values said as British voices say them, each pronunciation the dictionary has for a value's
words a variant of its class word (5 of 6 values heard at least); house numbers said in
pairs of digits ("sixteen hundred", "two twenty one"), written as the bot writes them (10
of 12 at least); the generic model's words mixed in (--generic: the model still proper, the
words at their weight; words the bot lacks heard as themselves, 9 of 12 at least, where
without them 2 at most); speech outside
the bot still gets words; a missing file is an error naming it. A pause within a request,
through the kiosk graph: its endpoint follows what the recognizer hears before it (a
request stopped half way waits 2 s, one heard whole 600 ms, one it cannot tell 1 s; a
hesitation last is half way), each checked against the endpoint set otherwise; a mains hum
that opens an utterance of no words is answered by nothing. audio.gst: an
unknown element, a missing file and a file that is not audio are errors naming the
description and the cause, and `parley run` returns within seconds (no hang).

Usage: test_asr.py PARLEY SOURCE_ROOT
(skips, exit 77, without espeak-ng, flite, festival's HTS voice, sox or the data)
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import wave

import yaml

from checks import check, done

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import sounds  # noqa: E402

parley, root = sys.argv[1:3]
GOFORWARD = "/usr/share/pocketsphinx/test/data/goforward.raw"
HTS = "/usr/share/festival/voices/us/cmu_us_slt_arctic_hts"  # festvox-us-slt-hts
if not (shutil.which("espeak-ng") and shutil.which("flite") and shutil.which("text2wave") and
        shutil.which("sox") and os.path.exists(HTS) and os.path.exists(GOFORWARD)):
    print("skip: needs espeak-ng, flite, festival's HTS voice, sox and pocketsphinx-testdata")
    sys.exit(77)

tmp = tempfile.mkdtemp(prefix="parley-asr-")
cache = os.path.join(tmp, "cache")
pizza = os.path.join(root, "samples", "pizza", "nlu.yaml")


def run(*args, timeout=120):
    return subprocess.run([parley, *args], capture_output=True, text=True, timeout=timeout)


def speak(text, name, voice="en-us", speed=150, engine="espeak-ng"):
    """A 16 kHz WAV of `text` with half a second of silence around it."""
    raw, wav = os.path.join(tmp, name + ".raw.wav"), os.path.join(tmp, name + ".wav")
    if engine == "flite":
        subprocess.run(["flite", "-voice", voice, "-t", text, "-o", raw], check=True)
    elif engine == "festival":
        subprocess.run(["text2wave", "-eval", "(voice_%s)" % voice, "-o", raw], input=text,
                       text=True, check=True)
    else:
        subprocess.run(["espeak-ng", "-v", voice, "-s", str(speed), "-w", raw, text], check=True)
    subprocess.run(["sox", raw, "-r", "16000", "-b", "16", wav, "pad", "0.5", "0.5"], check=True)
    return wav


# --- build ---------------------------------------------------------------------------------
def words_of_dict(path):
    return {line.split()[0].split("(")[0] for line in open(path)}


def arpa_tables(arpa):
    """{n-gram tuple: (log10 p, log10 back-off)} of an ARPA model, all orders in one."""
    grams = {}
    for order, section in enumerate(re.findall(r"^\\\d-grams:\n(.*?)\n\n", arpa, re.S | re.M),
                                    1):
        for ln in section.splitlines():
            f = ln.split()
            grams[tuple(f[1:1 + order])] = (float(f[0]), float(f[1 + order])
                                            if len(f) > 1 + order else 0.0)
    return grams


def prob(grams, history, w):
    """p(w | history), backing off as an ARPA reader does."""
    if not history:
        return 10 ** grams[(w,)][0]
    if history + (w,) in grams:
        return 10 ** grams[history + (w,)][0]
    return 10 ** grams.get(history, (0, 0.0))[1] * prob(grams, history[1:], w)


def class_model(bot, lm):
    """Checks the class trigram model at lm (and its classes and dictionary beside it): its
    unigrams, each history's probabilities, hesitations, class tags, pronunciations. Returns
    its unigrams' probabilities and its class members."""
    base = lm[:-3]
    arpa = open(lm).read()
    counts = [int(x) for x in re.findall(r"^ngram (\d)=(\d+)$", arpa, re.M) for x in x][1::2]
    check(arpa.startswith("\\data\\") and len(counts) == 3 and arpa.rstrip().endswith(
          "\\end\\") and "[c_" in arpa, "%s: an ARPA trigram model with class tags" % bot)
    body = arpa[arpa.index("\\1-grams:"):]
    listed = [ln.split()[1:] for ln in body.splitlines()
              if ln and not ln.startswith("\\")]
    check(len(listed) == sum(counts), "%s: %d n-grams listed, header says %d" %
          (bot, len(listed), sum(counts)))
    # every history's probabilities over the next word sum to at most 1 (a proper model)
    uni = {ln.split()[1]: 10 ** float(ln.split()[0]) for ln in
           body[:body.index("\\2-grams:")].splitlines()[1:] if ln}
    check(abs(sum(uni.values()) - 1) < 1e-3, "%s: unigrams sum to %.4f" %
          (bot, sum(uni.values())))
    grams = arpa_tables(arpa)
    vocab = [w for w in uni if w != "<s>"]
    sums = [sum(prob(grams, h, w) for w in vocab) for h in grams if 0 < len(h) < 3 and
            h[-1] != "</s>"]
    check(sums and 0.95 < min(sums) and max(sums) < 1 + 1e-3,
          "%s: each history's next words sum to %.4f-%.4f" % (bot, min(sums), max(sums)))
    # hesitations anywhere, scored as if they were not there: p(c | b um) = p(c | b)
    hesitations = [w for w in uni if w in ("<um>", "<uh>", "<hmm>")]
    skips = [(prob(grams, (h[0], u), h[1]), prob(grams, (h[0],), h[1]))
             for h in grams if len(h) == 2 and not set(h) & set(hesitations)
             for u in hesitations]
    check(len(hesitations) == 3 and skips and all(abs(a - b) < 1e-4 * b for a, b in skips) and
          all(0.01 < prob(grams, h, u) < 0.02 for h in grams if len(h) == 2 and
              h[-1] not in hesitations + ["</s>"] for u in hesitations),
          "%s: hesitations %r, %d skips" % (bot, hesitations, len(skips)))
    tags = {w for w in uni if w.startswith("[c_")}
    classdef = open(base + ".classdef").read()
    defined = set(re.findall(r"^LMCLASS (\S+)$", classdef, re.M))
    check(tags and tags == defined, "%s: classes in the model %r, defined %r" %
          (bot, sorted(tags), sorted(defined)))
    members = re.findall(r"^(\S+:c_\d+) (\S+)$", classdef, re.M)
    words = {w for w in uni if not w.startswith("[") and w not in ("<s>", "</s>")}
    dict_words = words_of_dict(base + ".dict")
    check(words | {m for m, _ in members} <= dict_words,
          "%s: the dictionary lacks %r" % (bot, sorted((words | {m for m, _ in members}) -
                                                       dict_words)[:5]))
    return uni, members


def left_out(bot, nlu, lm, members):
    """Checks that a slot beside another may be left out ("a medium dark roast please" where
    the examples name the drink after the roast): in each example where two slots stand side
    by side and neither is named twice, the word after the pair follows the first alone.
    Returns the model's n-grams and the examples' class patterns."""
    tag = {m.split(":")[0]: "[%s]" % m.split(":")[1] for m, _ in members}
    patterns = []
    examples = [ln.strip()[2:] for item in yaml.safe_load(open(nlu))["nlu"] if "intent" in item
                for ln in item["examples"].splitlines() if ln.strip().startswith("- ")]
    for line in examples:
        words = re.sub(r"\[([^\]]+)\]\([a-z_]+\)",
                       lambda v: " <%s> " % v.group(1).lower().replace(" ", "_"), line)
        words = [tag.get(w[1:-1], "?") if w.startswith("<") else w for w in words.split()]
        if "?" not in words:
            patterns.append(words + ["</s>"])
    grams = arpa_tables(open(lm).read())
    pairs = {(p[k], p[k + 2]) for p in patterns for k in range(len(p) - 2)
             if p[k].startswith("[") and p[k + 1].startswith("[") and
             p.count(p[k]) == 1 and p.count(p[k + 1]) == 1}
    missing = [g for g in pairs if prob(grams, g[:1], g[1]) < 0.01]
    check(pairs and not missing, "%s: %d slots side by side, the word after the pair unlikely "
          "after the first alone: %r" % (bot, len(pairs), missing[:3]))
    return grams, patterns


for bot in ("pizza", "smarthome"):
    nlu = os.path.join(root, "samples", bot, "nlu.yaml")
    # the default: a class trigram model (ARPA), its classes, and a dictionary of its words
    r = run("asr", "build", "--nlu", nlu, "--cache", cache)
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and len(lines) == 2 and lines[0].endswith(".lm") and
          os.path.exists(lines[0]), "%s: build: rc %d, %r %s" % (bot, r.returncode, r.stdout,
                                                                  r.stderr))
    if lines and lines[0].endswith(".lm"):
        base = lines[0][:-3]
        n = int(lines[1].split()[0]) if len(lines) > 1 else 0
        check(n > 100, "%s: %d sentence patterns" % (bot, n))
        uni, members = class_model(bot, lines[0])
        left_out(bot, nlu, lines[0], members)
        if bot == "pizza":  # written as the examples write them, said in words
            pizza_uni = uni
            check("12_baker_street:c_0" in dict(members) and re.search(
                  r"^12_baker_street:c_0 T W EH L V B EY K ER S T R IY T$",
                  open(base + ".dict").read(), re.M),
                  "pizza: '12 Baker Street' is one class word, said 'twelve baker street'")
            # every pronunciation the dictionary gives a value's words (cmudict: "tomatoes"
            # T AH M EY T OW Z and T AH M AA T OW Z), each a variant of its class word
            check(re.search(r"^tomatoes:c_\d+ T AH M EY T OW Z\ntomatoes:c_\d+\(2\) T AH M AA T OW Z$",
                            open(base + ".dict").read(), re.M),
                  "pizza: 'tomatoes' said both ways")
            # a house number read in pairs too, as people say it: "sixteen hundred"
            check(re.search(r"^1600_pennsylvania_avenue:c_\d+\(\d\) S IH K S T IY N HH AH N D R AH D P",
                            open(base + ".dict").read(), re.M),
                  "pizza: '1600 Pennsylvania Avenue' said 'sixteen hundred ...' too")
        again = run("asr", "build", "--nlu", nlu, "--cache", cache)
        check(again.stdout.splitlines()[0] == lines[0] and "(cached)" in again.stdout,
              "%s: the second build is the cached file: %r" % (bot, again.stdout))
        changed = os.path.join(tmp, bot + "-nlu.yaml")
        with open(changed, "w") as f:
            f.write(open(nlu).read() + "  - intent: extra_intent\n    examples: |\n"
                    "      - play some music\n")
        new = run("asr", "build", "--nlu", changed, "--cache", cache)
        check(new.returncode == 0 and new.stdout.splitlines()[0] != lines[0] and
              "(cached)" not in new.stdout and " music " in
              open(new.stdout.splitlines()[0]).read(),
              "%s: a changed nlu.yaml builds a new model: %r" % (bot, new.stdout))
    # the alternative: a JSGF grammar of the examples' exact patterns
    r = run("asr", "build", "--nlu", nlu, "--cache", cache, "--grammar")
    lines = r.stdout.splitlines()
    check(r.returncode == 0 and len(lines) == 2 and lines[0].endswith(".gram"),
          "%s: build --grammar: rc %d, %r %s" % (bot, r.returncode, r.stdout, r.stderr))
    if lines and lines[0].endswith(".gram"):
        gram = open(lines[0]).read()
        check(gram.startswith("#JSGF V1.0;") and "public <utterance>" in gram and "<c_" in gram,
              "%s: a JSGF grammar with slot classes" % bot)
        body = " ".join(line for line in gram[gram.index("public <utterance> ="):].splitlines()
                        if not line.startswith("//"))
        used = {w for w in re.split(r"[\s()|;=]+", body[len("public <utterance> ="):])
                if w and not w.startswith("<")}
        dict_words = words_of_dict(lines[0][:-5] + ".dict")
        check(used and used <= dict_words, "%s: the grammar's dictionary lacks %r" %
              (bot, sorted(used - dict_words)[:5]))

# a list of things ("[rank] of [suit] [rank] of [suit]"): slots side by side belong to two,
# and neither is left out (the real "cards" recordings came out "four of queen of clubs" for
# "four queen of clubs" when one was)
def small_bot(name, text):
    """Builds the class model of a bot written here (its nlu.yaml's text): the nlu.yaml's
    path and the model's, None when the build failed."""
    nlu = os.path.join(tmp, name + "-nlu.yaml")
    with open(nlu, "w") as f:
        f.write(text)
    r = run("asr", "build", "--nlu", nlu, "--cache", cache)
    check(r.returncode == 0, "%s: build: %r" % (name, r.stderr))
    return nlu, r.stdout.split()[0] if r.returncode == 0 else None


cards, lm = small_bot("cards", "version: \"3.1\"\nnlu:\n  - intent: cards\n    examples: |\n"
                      "      - [ten](rank) of [clubs](suit)\n"
                      "      - [ace](rank) of [spades](suit) and [two](rank) of [hearts](suit)\n"
                      "      - [king](rank) of [diamonds](suit) [three](rank) of [clubs](suit)\n"
                      "      - [a large](size) [latte](drink) please\n")
if lm:
    _, members = class_model("cards", lm)
    grams, patterns = left_out("cards", cards, lm, members)
    rank, suit = patterns[0][0], patterns[0][2]
    check(prob(grams, (rank, "of"), rank) < 0.01 and prob(grams, (suit,), "of") < 0.01,
          "cards: a rank after 'RANK of' %.3f, 'of' after a suit %.3f" %
          (prob(grams, (rank, "of"), rank), prob(grams, (suit,), "of")))

# a slot whose examples tag a value in the plural ("lattes" beside "latte") has a class of
# every value in the plural (made by the spelling's rules where the bot wrote none), and each
# pattern names the class its value is in: "two" goes before a plural, "a" before a singular
DRINKS = ("version: \"3.1\"\nnlu:\n  - intent: order\n    examples: |\n"
          "      - can i get [two](quantity) [lattes](drink)\n"
          "      - can i get a [latte](drink)\n"
          "      - a [mocha](drink) please\n"
          "  - lookup: drink\n    examples: |\n"
          "      - flat white\n      - punch\n      - cherry\n")
_, lm = small_bot("drinks", DRINKS)
if lm:
    _, members = class_model("drinks", lm)
    classes = {}
    for m, _ in members:
        classes.setdefault(m.split(":")[1], set()).add(m.split(":")[0])
    one = [set(v) for v in classes.values() if "latte" in v]
    many = [set(v) for v in classes.values() if "lattes" in v]
    check(one == [{"latte", "mocha", "flat_white", "punch", "cherry"}] and
          many == [{"lattes", "mochas", "flat_whites", "punches", "cherries"}],
          "drinks: a class in the singular %r and one in the plural %r" % (one, many))
    tag = {m.split(":")[0]: "[%s]" % m.split(":")[1] for m, _ in members}
    grams = arpa_tables(open(lm).read())
    check(prob(grams, ("get", tag["two"]), tag["lattes"]) > 0.7 and
          prob(grams, ("get", tag["two"]), tag["latte"]) < 0.01 and
          prob(grams, ("get", "a"), tag["latte"]) > 0.7,
          "drinks: after 'get two' a plural %.3f, a singular %.3f; after 'get a' a singular %.3f"
          % (prob(grams, ("get", tag["two"]), tag["lattes"]),
             prob(grams, ("get", tag["two"]), tag["latte"]), prob(grams, ("get", "a"), tag["latte"])))
    _, lm = small_bot("drinks-singular", DRINKS.replace("[lattes]", "[latte]"))
    if lm:
        _, members = class_model("drinks-singular", lm)
        check(len({m.split(":")[1] for m, _ in members}) == 2,
              "drinks: no plural class where no value is tagged in the plural: %r" % members)

# mixed with the generic model's most frequent words the bot lacks, at a weight: still a
# proper model, its words pronounced; the generic words hold the weight's share of the mass
# (less the hesitations'), and a word of the bot's values stays in its class
r = run("asr", "build", "--nlu", pizza, "--cache", cache, "--generic", "0.05")
lines = r.stdout.splitlines()
check(r.returncode == 0 and lines and lines[0].endswith(".lm") and
      lines[0] != run("asr", "build", "--nlu", pizza, "--cache", cache).stdout.split()[0],
      "pizza --generic 0.05: a model of its own: rc %d, %r %s" % (r.returncode, r.stdout,
                                                                 r.stderr))
if r.returncode == 0:
    uni, _ = class_model("pizza --generic 0.05", lines[0])
    extra = set(uni) - set(pizza_uni)
    mass = sum(uni[w] for w in extra)
    check(len(extra) == 300 and abs(mass - 0.05 * 0.96) < 1e-3 and
          {"going", "maybe", "guess"} <= extra and not extra & {"two", "large", "ham"},
          "pizza --generic 0.05: %d generic words, %.4f of the mass" % (len(extra), mass))
for bad, why in ((["--generic", "0.7"], "from 0 to 0.5"), (["--generic", "x"], "not a number"),
                 (["--generic", "0.1", "--grammar"], "not a grammar")):
    r = run("asr", "build", "--nlu", pizza, "--cache", cache, *bad)
    check(r.returncode in (1, 2) and why in r.stderr, "build %s: %r" % (" ".join(bad), r.stderr))

broken = os.path.join(tmp, "broken.yaml")
with open(broken, "w") as f:
    f.write("version: \"3.1\"\nnlu:\n  - intent: a\n    examples: |\n      - [unclosed(slot\n")
r = run("asr", "build", "--nlu", broken, "--cache", cache)
check(r.returncode == 1 and "broken.yaml:" in r.stderr, "broken nlu.yaml: %r" % r.stderr)

# --- transcribe ----------------------------------------------------------------------------
real = os.path.join(tmp, "goforward.wav")
subprocess.run(["sox", "-t", "raw", "-r", "16000", "-e", "signed", "-b", "16", "-c", "1",
                GOFORWARD, real], check=True)
r = run("asr", "transcribe", real)
check(r.returncode == 0 and r.stdout.strip() == "go forward ten meters",
      "real speech, generic model: %r %s" % (r.stdout, r.stderr))

# orders in words no single example has (an example's opening, another's tail) and exact
# patterns, in Debian's flite voices: the class trigram model recombines, the grammar cannot
# (what is said, the voice, the transcript: slot values as the examples write them)
orders = [("i want a large pizza with mushrooms", "slt", None),
          ("can i order a medium pizza with chicken please", "rms", None),
          ("a large pizza with mushrooms", "awb", None),
          ("give me a medium pizza with basil and pineapple", "kal16", None),
          ("could you send two medium pizzas to twelve baker street", "slt",
           "could you send 2 medium pizzas to 12 baker street"),
          ("i'd like to order four large pizzas", "rms", None),
          ("can i get two small pizzas with ham", "awb", "can i get 2 small pizzas with ham"),
          ("i want three large pizzas with extra cheese", "kal16",
           "i want 3 large pizzas with extra cheese")]
wavs = [speak(t, "order%d" % i, v, engine="flite") for i, (t, v, _) in enumerate(orders)]
oog = speak("the weather is lovely in paris today", "oog")
r = run("asr", "transcribe", "--nlu", pizza, "--cache", cache, *wavs, oog)
got = r.stdout.splitlines()
check(r.returncode == 0 and len(got) == len(orders) + 1,
      "transcribe: rc %d, %r" % (r.returncode, r.stdout))
right = sum(1 for (t, _, w), g in zip(orders, got) if g == (w or t))
check(right >= 7, "pizza class model: %d of %d orders exact: %r" % (right, len(orders), got))
check(len(got) > len(orders) and got[-1].strip() != "", "other speech still gives words: %r" %
      got[-1:])
r = run("asr", "transcribe", "--grammar", "--nlu", pizza, "--cache", cache, *wavs)
in_grammar = sum(1 for (t, _, _), g in zip(orders, r.stdout.splitlines()) if g == t)
check(r.returncode == 0 and right > in_grammar >= 2,
      "the grammar gets the exact patterns only: %d of %d against %d" %
      (in_grammar, len(orders), right))

# the same through festival's HTS voice, whose speech is smoother and less regular than the
# diphone voices': recombined phrasings, numbers written as the examples write them
hts = [("i want a large pizza with mushrooms", None),
       ("can i order a medium pizza with chicken please", None),
       ("could you send two medium pizzas to twelve baker street",
        "could you send 2 medium pizzas to 12 baker street"),
       ("i want three large pizzas with extra cheese", "i want 3 large pizzas with extra cheese")]
wavs = [speak(t, "hts%d" % i, "cmu_us_slt_arctic_hts", engine="festival")
        for i, (t, _) in enumerate(hts)]
r = run("asr", "transcribe", "--nlu", pizza, "--cache", cache, *wavs)
got = r.stdout.splitlines()
right = sum(1 for (t, w), g in zip(hts, got) if g == (w or t))
check(r.returncode == 0 and right == len(hts),
      "pizza class model, HTS voice: %d of %d orders exact: %r" % (right, len(hts), got))

# hesitations ("um", "uh") anywhere in an order, by eight voices of three engines: left out
# of the transcript, and the words around them heard as if they were not there
hesitant = [("um i want a large pizza with mushrooms", "slt", "flite", None),
            ("can i get um two small pizzas with ham", "rms", "flite",
             "can i get 2 small pizzas with ham"),
            ("i'd like a medium uh pepperoni pizza", "awb", "flite", None),
            ("um could you send two medium pizzas to twelve baker street", "kal16", "flite",
             "could you send 2 medium pizzas to 12 baker street"),
            ("a large pizza with um mushrooms please", "slt", "flite", None),
            ("uh can i order a small pizza", "rms", "flite", None),
            ("um i want a large pizza with mushrooms", "en-us", "espeak-ng", None),
            ("can i get um two small pizzas with ham", "en-us+f3", "espeak-ng",
             "can i get 2 small pizzas with ham"),
            ("i'd like a medium uh pepperoni pizza", "cmu_us_slt_arctic_hts", "festival", None),
            ("um can i order a small pizza", "cmu_us_slt_arctic_hts", "festival", None)]
wavs = [speak(t, "hesitant%d" % i, v, engine=e) for i, (t, v, e, _) in enumerate(hesitant)]
r = run("asr", "transcribe", "--nlu", pizza, "--cache", cache, *wavs)
got = r.stdout.splitlines()
want = [w or " ".join(x for x in t.split() if x not in ("um", "uh")) for t, _, _, w in hesitant]
right = sum(1 for w, g in zip(want, got) if g == w)
check(r.returncode == 0 and right >= 8,
      "hesitations: %d of %d orders exact: %r" % (right, len(hesitant), got))

# slot values as British voices say them ("tomatoes" T AH M AA T OW Z, "tuna" T Y UW N AH:
# cmudict's second pronunciations), in espeak-ng's three British English voices
british = [(t, v) for t in ("a large pizza with tomatoes",
                            "give me a small pizza with tuna and tomatoes")
           for v in ("en-gb", "en-gb-scotland", "en-gb-x-rp")]
wavs = [speak(t, "british%d" % i, v) for i, (t, v) in enumerate(british)]
r = run("asr", "transcribe", "--nlu", pizza, "--cache", cache, *wavs)
got = r.stdout.splitlines()
right = sum(1 for (t, _), g in zip(british, got) if g.endswith(t[t.index(" with "):]))
check(r.returncode == 0 and right >= 5,
      "British slot values: %d of %d heard: %r" % (right, len(british), got))

# house numbers said as people say them ("sixteen hundred", "two twenty one") come out as the
# bot writes them, by six voices of three engines
addresses = [(t, want, v, e) for t, want in (
    ("bring it to sixteen hundred pennsylvania avenue please", "1600 pennsylvania avenue"),
    ("send it to two twenty one elm road", "221 elm road"))
    for v, e in (("slt", "flite"), ("rms", "flite"), ("awb", "flite"), ("kal16", "flite"),
                 ("en-us", "espeak-ng"), ("cmu_us_slt_arctic_hts", "festival"))]
wavs = [speak(t, "address%d" % i, v, engine=e) for i, (t, _, v, e) in enumerate(addresses)]
r = run("asr", "transcribe", "--nlu", pizza, "--cache", cache, *wavs)
got = r.stdout.splitlines()
right = sum(1 for (_, want, _, _), g in zip(addresses, got) if want in g)
check(r.returncode == 0 and right >= 10,
      "house numbers in pairs: %d of %d heard: %r" % (right, len(addresses), got))

# words the dictionary lacks ("frappuccino", "macchiato", "bruschetta") are pronounced from
# their spelling (espeak-ng's phonemes in ARPAbet): no phrase is dropped, and they are heard
cafe = os.path.join(tmp, "cafe.yaml")
with open(cafe, "w") as f:
    f.write("version: \"3.1\"\nnlu:\n  - intent: greet\n    examples: |\n      - hello there\n"
            "  - intent: order\n    examples: |\n      - a [frappuccino](drink) please\n"
            "      - i want a [macchiato](drink)\n      - one [latte](drink)\n"
            "      - can i get a [bruschetta](food) and a [latte](drink)\n")
r = run("asr", "build", "--nlu", cafe, "--cache", cache)
lines = r.stdout.splitlines()
check(r.returncode == 0 and len(lines) == 2 and "0 phrases dropped" in lines[1] and
      "3 words pronounced from their spelling" in lines[1],
      "cafe: build: rc %d, %r %s" % (r.returncode, r.stdout, r.stderr))
said = dict(line.split(" ", 1) for line in open(lines[0][:-3] + ".dict").read().splitlines()
            if lines and lines[0].endswith(".lm"))
check(said.get("frappuccino:c_0", "").startswith("F R AE P") and
      said.get("bruschetta:c_1", "").startswith("B R"),
      "cafe: guessed pronunciations in ARPAbet: %r" % said)
cafe_orders = [(t, v) for v in ("slt", "rms", "awb")
               for t in ("i want a frappuccino", "can i get a bruschetta and a macchiato")]
wavs = [speak(t, "cafe%d" % i, v, engine="flite") for i, (t, v) in enumerate(cafe_orders)]
r = run("asr", "transcribe", "--no-fallback", "--nlu", cafe, "--cache", cache, *wavs)
right = sum(1 for (t, _), g in zip(cafe_orders, r.stdout.splitlines()) if g == t)
check(r.returncode == 0 and right >= 5, "cafe: %d of %d orders with guessed words exact: %r" %
      (right, len(cafe_orders), r.stdout))

# the bot's own pronunciations (--lexicon): heard before the dictionary's, which stay after
# them (none twice), or before the spelling's guess of a word the dictionary lacks; an
# edited lexicon makes another model; bad lines are errors naming FILE:LINE. "grande" as
# coffee shops say it (G R AA N D EY; cmudict has only G R AE N D), said so by espeak-ng's
# phonemes, is heard with the lexicon, and seldom without
def tmp_file(name, text):
    path = os.path.join(tmp, name)
    with open(path, "w") as f:
        f.write(text)
    return path


coffee = tmp_file("coffee.yaml", "version: \"3.1\"\nnlu:\n  - intent: order\n    examples: |\n"
                  "      - can i get a [tall](size) [latte](drink)\n"
                  "      - a [grande](size) [mocha](drink)\n"
                  "      - i'd like a [venti](size) [macchiato](drink) please\n"
                  "      - one [small](size) [americano](drink)\n")
lexicon = tmp_file("coffee.lex", "# as people order them\ngrande G R AA N D EY\n"
                   "Grande(2) G R AE N D\nmacchiato M AA K IY AA T OW\n")
plain = run("asr", "build", "--nlu", coffee, "--cache", cache)
r = run("asr", "build", "--nlu", coffee, "--cache", cache, "--lexicon", lexicon)
lines = r.stdout.splitlines()
check(r.returncode == 0 and plain.returncode == 0 and lines and
      lines[0] != plain.stdout.splitlines()[0],
      "lexicon: build: %r against %r %s" % (r.stdout, plain.stdout, r.stderr))
def dict_phones(lm_path):
    """Each word's (or class member's) pronunciations in the dictionary beside a model."""
    out = {}
    for line in open(lm_path[:-3] + ".dict").read().splitlines():
        word, ph = line.split(" ", 1)
        out.setdefault(word.split(":")[0].split("(")[0], []).append(ph)
    return out


phones = dict_phones(lines[0]) if r.returncode == 0 else {}
# every pronunciation cmudict has, where its order parts them ("a's" stands between "a" and
# "a(2)"; "can's" between "can" and "can(2)")
plain_phones = dict_phones(plain.stdout.splitlines()[0]) if plain.returncode == 0 else {}
check(plain_phones.get("a") == ["AH", "EY"] and plain_phones.get("can") == ["K AE N", "K AH N"],
      "every variant of 'a' and 'can': %r %r" % (plain_phones.get("a"), plain_phones.get("can")))
check(phones.get("grande") == ["G R AA N D EY", "G R AE N D"] and
      (phones.get("macchiato") or [""])[0] == "M AA K IY AA T OW" and
      len(phones.get("macchiato")) == 2,
      "lexicon: the lexicon's pronunciations first, then the dictionary's or the spelling's, "
      "none twice: %r" % phones)
for text, want in (("grande G R AA N D XX\n", "coffee.bad:1: 'XX' is not a phone"),
                   ("# fine\n\nmocha\n", "coffee.bad:3: a word and its phones")):
    r = run("asr", "build", "--nlu", coffee, "--cache", cache, "--lexicon",
            tmp_file("coffee.bad", text))
    check(r.returncode == 1 and want in r.stderr, "lexicon %r: %r" % (text, r.stderr))
grande = [("can i get a [[gr'A:ndeI]] latte", v) for v in ("en-us", "en-us+f3", "en-us+m3")] + \
         [("a [[gr'A:ndeI]] mocha", v) for v in ("en-us", "en-us+f3", "en-us+m3")]
wavs = [speak(t, "grande%d" % i, v) for i, (t, v) in enumerate(grande)]
heard = {}
for lex in ([], ["--lexicon", lexicon]):
    r = run("asr", "transcribe", "--no-fallback", "--nlu", coffee, "--cache", cache, *lex, *wavs)
    heard[bool(lex)] = sum(1 for g in r.stdout.splitlines() if "grande" in g.split())
check(heard[True] >= 5 and heard[False] <= 2,
      "'grande' said G R AA N D EY: heard %d of %d with the lexicon, %d without" %
      (heard[True], len(grande), heard[False]))

# words the pizza bot lacks ("going", "maybe", "guess"): forced onto the bot's own words by
# default; heard as themselves with the generic model's words mixed in (--generic 0.05)
outside = [(t, w, v) for t, w in (("i'm going to have a large pizza with ham", "going"),
                                  ("maybe a small pizza with olives", "maybe"),
                                  ("i guess i'll have a large pepperoni pizza", "guess"))
           for v in ("slt", "rms", "awb", "kal16")]
wavs = [speak(t, "outside%d" % i, v, engine="flite") for i, (t, _, v) in enumerate(outside)]
heard = {}
for mix in ([], ["--generic", "0.05"]):
    r = run("asr", "transcribe", "--nlu", pizza, "--cache", cache, *mix, *wavs)
    got = r.stdout.splitlines()
    heard[bool(mix)] = sum(1 for (_, w, _), g in zip(outside, got) if w in g.split())
    check(r.returncode == 0 and len(got) == len(wavs), "outside words %r: %r %s" %
          (mix, r.stdout, r.stderr))
check(heard[False] <= 2 and heard[True] >= 9,
      "words outside the bot heard: %d of %d by default, %d with --generic 0.05" %
      (heard[False], len(outside), heard[True]))

r = run("asr", "transcribe", os.path.join(tmp, "nothing.wav"))
check(r.returncode == 1 and "nothing.wav" in r.stderr, "missing file: %r" % r.stderr)

# --- a pause within a request -------------------------------------------------------------
# The endpoint follows what the recognizer hears before a pause: words that stop half way
# wait incomplete_ms (2 s), words heard as a whole request complete_ms (600 ms), and words it
# cannot tell ("i want a large": the pizza bot also ends requests with "a large") silence_ms
# (1 s). Each file: two phrases of flite's rms voice, their own silences trimmed, a measured
# pause between; the number of turns the kiosk graph makes of it.
def paused(name, first, second, pause_s):
    parts = []
    for i, text in enumerate((first, second)):
        raw = os.path.join(tmp, "%s%d.raw.wav" % (name, i))
        subprocess.run(["flite", "-voice", "rms", "-t", text, "-o", raw], check=True)
        parts.append(os.path.join(tmp, "%s%d.wav" % (name, i)))
        subprocess.run(["sox", raw, "-r", "16000", parts[-1], "silence", "1", "0.05", "1%",
                        "reverse", "silence", "1", "0.05", "1%", "reverse"], check=True)
    gap, out = os.path.join(tmp, name + "gap.wav"), os.path.join(tmp, name + ".wav")
    subprocess.run(["sox", "-n", "-r", "16000", "-c", "1", "-b", "16", gap, "trim", "0",
                    str(pause_s)], check=True)
    subprocess.run(["sox", parts[0], gap, parts[1], out, "pad", "0.5", "1.5"], check=True)
    return out


def kiosk(wav, *sets):
    """`parley run` of the kiosk graph over wav, the recognizer's text to text.stdout."""
    graph = os.path.join(tmp, "pause.yaml")
    with open(graph, "w") as f:
        f.write("name: pause\nnodes:\n  - name: mic\n    kind: audio.gst\n"
                "    params: { source: \"filesrc location=%s ! decodebin\" }\n"
                "  - name: asr\n    kind: asr.pocketsphinx\n"
                "    params: { nlu_data: %s, cache_dir: %s }\n    inputs: { in: mic.audio }\n"
                "  - name: out\n    kind: text.stdout\n    inputs: { reply: asr.text }\n"
                % (wav, os.path.abspath(pizza), cache))
    extra = [a for s in sets for a in ("--set", "mic." + s)]
    return run("run", graph, *extra)


def turns(wav, *sets):
    return kiosk(wav, *sets).stdout.count("\n")


every_600 = ("silence_ms=600", "complete_ms=600", "incomplete_ms=600")
wav = paused("unsure", "i want a large", "pepperoni pizza please", 0.74)
got = (turns(wav), turns(wav, *every_600))
check(got == (1, 2), "'i want a large', 0.74 s: %d turn(s) by default, %d at 600 ms" % got)
wav = paused("halfway", "i'd like a large pizza with", "mushrooms please", 1.4)
got = (turns(wav), turns(wav, "incomplete_ms=1000"))
check(got == (1, 2), "'... pizza with', 1.4 s: %d turn(s) by default, %d at 1 s" % got)
got = (turns(paused("um", "i want a large um", "pepperoni pizza please", 1.5)),
       turns(paused("noum", "i want a large", "pepperoni pizza please", 1.5)))
check(got == (1, 2), "'i want a large um' / 'i want a large', 1.5 s: %d / %d turn(s)" % got)
wav = paused("whole", "i want a large pepperoni pizza", "with extra cheese please", 0.8)
got = (turns(wav), turns(wav, "complete_ms=1000"))
check(got == (2, 1), "'... pepperoni pizza', 0.8 s: %d turn(s) by default, %d at 1 s" % got)

# a mains hum of 1 s in a quiet room (50 Hz at -44 dBFS over a hiss: under the recognizer's
# lowest band, so at 60-1000 of amplitude alike) opens an utterance the recognizer hears no
# words in: cut at the pause after it, it is answered by nothing (logged on stderr)
hum = os.path.join(tmp, "hum.wav")
with wave.open(hum, "wb") as w:
    w.setnchannels(1), w.setsampwidth(2), w.setframerate(16000)
    w.writeframes(sounds.mains_hum())
r = kiosk(hum)
check(r.stdout == "" and "no words recognized in utterance 1" in r.stderr,
      "a hum heard as no words: no answer (%r), logged (%r)" % (r.stdout, r.stderr[-300:]))

# --- audio.gst errors ----------------------------------------------------------------------
graph = os.path.join(tmp, "gst.yaml")
with open(graph, "w") as f:
    f.write("name: gst\nnodes:\n  - name: mic\n    kind: audio.gst\n"
            "    params: { source: \"filesrc location=x ! decodebin\" }\n"
            "  - name: asr\n    kind: asr.stub\n    inputs: { in: mic.audio }\n"
            "  - name: out\n    kind: text.stdout\n    inputs: { reply: asr.text }\n")
notaudio = os.path.join(tmp, "notaudio.wav")
with open(notaudio, "w") as f:
    f.write("this is text, not a WAV file\n" * 100)
# the first two are found when the graph opens (exit 1); a decode error once it runs is the
# node's error, reported as it happens (the run then ends as at the end of input)
for desc, want, rc in [("nosuchelement ! decodebin", "no element", 1),
                       ("filesrc location=%s/missing.wav ! decodebin" % tmp, "missing.wav", 1),
                       ("filesrc location=%s ! decodebin" % notaudio, "text file", 0)]:
    try:
        r = run("run", graph, "--set", "mic.source=" + desc, timeout=30)
        check(r.returncode == rc and want in r.stderr and "GStreamer '%s'" % desc in r.stderr,
              "audio.gst '%s': rc %d, %r" % (desc, r.returncode, r.stderr))
    except subprocess.TimeoutExpired:
        check(False, "audio.gst '%s' hangs" % desc)

shutil.rmtree(tmp)
sys.exit(done("services/voice/asr"))
