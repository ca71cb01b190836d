"""default_encoder.py — where the default encoder is, found as nlu/train/encoder.c finds it, for
the tests that train with every default.

Such a test names the encoder it starts from (PARLEY_ENCODER, set here) or, where none is built
(tools/encoder.sh builds it), skips with exit 77 and says why: no test depends unseen on what
this machine's cache holds. A folder is the encoder when it holds config.json,
model.safetensors and vocab.txt: $PARLEY_ENCODER when set ("none" or empty: no encoder), else
$XDG_CACHE_HOME/parley/encoder, else ~/.cache/parley/encoder (sdk/base/files.c, pl_cache_dir).
"""
import os
import sys

SKIP = 77
FILES = ("config.json", "model.safetensors", "vocab.txt")


def folder():
    """Where the default encoder would be, or None where there is no such place."""
    env = os.environ.get("PARLEY_ENCODER")
    if env is not None:
        return env if env and env != "none" else None
    cache, home = os.environ.get("XDG_CACHE_HOME"), os.environ.get("HOME")
    if cache:
        return os.path.join(cache, "parley", "encoder")
    if home:
        return os.path.join(home, ".cache", "parley", "encoder")
    return None


def find():
    """The default encoder's folder (absolute), or None when it is not built."""
    d = folder()
    if d and all(os.path.isfile(os.path.join(d, f)) for f in FILES):
        return os.path.abspath(d)
    return None


def missing():
    """Why there is no default encoder, in words."""
    env = os.environ.get("PARLEY_ENCODER")
    if env is not None and (not env or env == "none"):
        return "PARLEY_ENCODER is %r" % env
    d = folder()
    if d is None:
        return "no cache folder (neither XDG_CACHE_HOME nor HOME is set)"
    return "none is built at %s (tools/encoder.sh builds it; PARLEY_ENCODER names another)" % d


def skip_line(test):
    """The line a test that trains with every default prints when it skips."""
    return ("%s: skipped: it trains with every default, from the default encoder, and %s" %
            (test, missing()))


def require(test):
    """The default encoder's folder, named in PARLEY_ENCODER for every parley this process
    runs; where it is not built, says so and exits 77 (skip)."""
    d = find()
    if d is None:
        print(skip_line(test))
        sys.exit(SKIP)
    os.environ["PARLEY_ENCODER"] = d
    return d
