#!/usr/bin/env python3
"""layers.py — checks that every source file includes only what its layer may (ARCHITECTURE.md).

Reads the `#include "..."` and `#include <...>` lines of the library, the CLI, tests and
benchmarks under the repository root (argv[1], default: the parent of this file's folder) and
prints one line per violation, FILE:LINE: what is included and why it may not be. Exits 1 on
any violation, 0 otherwise. The rules below are the table in ARCHITECTURE.md; change both
together.
"""
import os
import re
import sys

BASE = ("parley/", "sdk/base/", "parley_config.h")
NODE = ("pipeline/node.h", "pipeline/metrics.h", "pipeline/audio.h")

# The rooms of nlu/ below its inference core, as the core and its users may include them: the
# text side, the sparse features' interface (never sparse_impl.h, their insides), the model.
NLU_ROOMS = ("nlu/text/", "nlu/sparse/sparse.h", "nlu/model/")

# Folder -> the project headers its files may include (prefixes). The most specific folder wins.
ALLOWED = {
    "sdk/base": BASE,
    "pipeline": BASE + ("pipeline/",),
    "services": BASE + NODE + ("pipeline/graph.h", "services/", "nlu/data/dataset.h"),
    "dialog": BASE + NODE + ("dialog/",),
    "nlu/cpu": BASE + ("nlu/cpu/",),
    "nlu/text": BASE + ("nlu/text/",),
    "nlu/sparse": BASE + ("nlu/text/", "nlu/sparse/"),
    # the slot prior (config.c) weighs tags by intent with decoding's one softmax
    "nlu/model": BASE + ("nlu/text/", "nlu/sparse/sparse.h", "nlu/model/", "nlu/decode.h"),
    # the unmarked lookup values (unmarked.c) are found by the sparse features' own matcher
    "nlu/data": BASE + ("nlu/data/", "nlu/text/", "nlu/sparse/sparse.h"),
    "nlu": BASE + NODE + NLU_ROOMS + ("nlu/cpu/", "nlu/cuda/cuda_bert.h"),  # plus nlu/*.h, below
    "nlu/cuda": BASE + NLU_ROOMS + ("nlu/cpu/", "nlu/cuda/"),  # plus nlu/*.h (bert_step.h), below
    "nlu/train": BASE + ("nlu/",),
    "sdk/lib": BASE + ("sdk/lib/", "pipeline/", "services/", "nlu/", "dialog/"),
    "sdk/cli": ("parley/", "parley_config.h", "sdk/cli/"),  # plus one header per module, below
}
# Headers a folder may not include although ALLOWED's prefixes cover them: the engine knows no
# module, so a message's payload is freed by the function the node that made it gave.
DENIED = {
    "pipeline": ("parley/nlu.h", "parley/train.h", "parley/asr.h", "parley/parley.h"),
}
# Folders whose files may also include the headers directly in nlu/ (the inference core).
NLU_CORE_USERS = {"nlu", "nlu/cuda", "nlu/train"}
# The modules of which the CLI may include at most one internal header each.
CLI_MODULES = ("sdk/base/", "pipeline/", "services/", "nlu/", "dialog/")

# System headers that exactly one place wraps: foreign libraries are translated at one
# boundary each.
SYSTEM_OWNERS = {
    "yaml.h": ("sdk/base/yaml_doc.c",),
    "sqlite3.h": ("dialog/store_sqlite.c",),
    "libpq-fe.h": ("dialog/store_pg.c",),
    "pcre2.h": ("sdk/base/pattern.c",),
    "cblas.h": ("nlu/cpu/",),
    "cublas_v2.h": ("nlu/cuda/",),
    "cuda_runtime.h": ("nlu/cuda/",),
    "cuda_fp16.h": ("nlu/cuda/",),
    "cuda_bf16.h": ("nlu/cuda/",),
    "libwebsockets.h": ("services/",),
    "gst/gst.h": ("services/gst_audio.c",),
    "pocketsphinx.h": ("services/",),
    "espeak-ng/speak_lib.h": ("services/espeak.c", "services/tts_espeak.c", "services/asr_lts.c"),
    "flite/flite.h": ("services/tts_flite.c",),
    "gst/app/gstappsink.h": ("services/gst_audio.c",),
    "gst/app/gstappsrc.h": ("services/gst_audio.c",),
}
SOURCE = re.compile(r"\.(c|h|cu|cuh|cc)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
LIBRARY = ("sdk/base", "sdk/lib", "pipeline", "services", "dialog", "nlu")


def layer_of(path):
    """The most specific folder of ALLOWED that holds `path`, or None (tests, bench, samples)."""
    best = None
    for folder in ALLOWED:
        if path.startswith(folder + "/") and (best is None or len(folder) > len(best)):
            best = folder
    return best


def check_file(root, path, cli_seen, out):
    layer = layer_of(path)
    with open(os.path.join(root, path), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            kind, inc = m.groups()
            where = f"{path}:{n}"
            if kind == "<":
                owners = SYSTEM_OWNERS.get(inc)
                if owners and not path.startswith(owners) and layer is not None:
                    out.append(f"{where}: <{inc}> belongs to {', '.join(owners)} only")
                continue
            if layer is None:
                continue
            if inc.startswith("sdk/cli/") and layer != "sdk/cli":
                out.append(f'{where}: "{inc}": the library never includes the CLI')
                continue
            ok = inc.startswith(ALLOWED[layer]) and not inc.startswith(DENIED.get(layer, ()))
            if not ok and layer in NLU_CORE_USERS and inc.startswith("nlu/") and inc.count("/") == 1:
                ok = True
            if not ok and layer == "sdk/cli":
                module = next((m for m in CLI_MODULES if inc.startswith(m)), None)
                if module:
                    cli_seen.setdefault(module, {}).setdefault(inc, where)
                    ok = True
            if not ok:
                out.append(f'{where}: "{inc}" is outside what {layer}/ may include')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))
    out, cli_seen = [], {}
    for top in LIBRARY + ("sdk/cli",):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if SOURCE.search(name):
                    path = os.path.relpath(os.path.join(dirpath, name), root)
                    check_file(root, path, cli_seen, out)
    for module, incs in sorted(cli_seen.items()):
        if len(incs) > 1:
            listed = ", ".join(f'"{inc}" ({where})' for inc, where in sorted(incs.items()))
            out.append(f"sdk/cli: {len(incs)} internal headers of {module} (at most one): {listed}")
    for line in out:
        print(line)
    print(f"layers: {len(out)} violation(s)")
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
