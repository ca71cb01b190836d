"""checks.py — the assertion kit of the Python tests, as tests/check.h is of the C ones.

check(cond, what) records a failure and goes on (returning cond), so one run reports every broken case;
done(name) prints the tally and gives the exit code. The tests find this module through
PYTHONPATH (tests/, set by tests/meson.build).
"""
import sys

failures = []


def check(cond, what):
    """Records `what` as a failure unless cond holds; returns cond (for `if not check(...)`)."""
    if not cond:
        failures.append(what)
        print("FAIL:", what, file=sys.stderr)
    return cond


def done(name):
    print("%s: %d failure(s)" % (name, len(failures)))
    return 1 if failures else 0
