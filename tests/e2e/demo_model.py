"""demo_model.py — the demo's model, trained with every default from the default encoder it
names, and the tests that read it, skipped where there is no encoder.

  demo_model.py train OUT DEPFILE -- PARLEY TRAIN ARGS...
      runs the command with PARLEY_ENCODER set to the default encoder (tests/default_encoder.py)
      and writes DEPFILE so that ninja trains again when the encoder changes or is built.
      Where none is built, OUT holds only no_encoder.txt, the line saying why.
  demo_model.py run MODEL -- TEST ARGS...
      runs the test on MODEL, or exits 77 (skip) with that line when MODEL has no encoder.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import default_encoder  # noqa: E402

MARK = "no_encoder.txt"


def write_depfile(path, out, encoder):
    # A file the depfile names that is missing makes ninja run the command again at every
    # build: without an encoder, the files that would be it (or, with no place for one, a file
    # never made), so the model is trained once they exist; with one, its files, so the model
    # is trained again when it changes.
    where = encoder or default_encoder.folder()
    deps = ([os.path.join(where, f) for f in default_encoder.FILES] if where else
            [os.path.join(out, MARK + ".never")])
    with open(path, "w", encoding="utf-8") as f:
        f.write("%s: %s\n" % (out.replace(" ", "\\ "), " ".join(d.replace(" ", "\\ ")
                                                                 for d in deps)))


def train(out, depfile, cmd):
    encoder = default_encoder.find()
    write_depfile(depfile, out, encoder)
    if os.path.exists(os.path.join(out, MARK)):
        shutil.rmtree(out)
    if encoder is None:
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, MARK), "w", encoding="utf-8") as f:
            f.write(default_encoder.skip_line("the demo model") + "\n")
        return 0
    return subprocess.run(cmd, env=dict(os.environ, PARLEY_ENCODER=encoder)).returncode


def run(model, cmd):
    mark = os.path.join(model, MARK)
    if os.path.exists(mark):
        with open(mark, encoding="utf-8") as f:
            print("%s (%s)" % (f.read().strip(), model))
        return default_encoder.SKIP
    return subprocess.run(cmd).returncode


def main(argv):
    if len(argv) >= 4 and argv[0] == "train" and argv[3] == "--":
        return train(argv[1], argv[2], argv[4:])
    if len(argv) >= 3 and argv[0] == "run" and argv[2] == "--":
        return run(argv[1], argv[3:])
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
