"""rollout-fleet's result channel (docs/adversarial-grading.md, "The result channel").

Uploaded by the worker into the grading sandbox, outside the repository, and loaded before any code of the
repository runs: by pytest as a plugin (``-p rf_result_channel`` in PYTEST_ADDOPTS, this directory on
PYTHONPATH), by any other Python test runner through ``sitecustomize`` (RF_CHANNEL_MODE=unittest wraps
``unittest.TestResult``). Each test's outcome is appended to ``$RF_CHANNEL/results.jsonl``, one line per record::

    <json>\\t<hex HMAC-SHA256(key, previous mac + "\\n" + json)>

The key is read from ``$RF_CHANNEL/key`` and the file removed before any test code runs; the first process of
the test command to load this module takes it, later ones (subprocesses, forks) write nothing. The worker
checks the chain, that it starts and ends, and compares it with the log. Standard library only.
"""

import hashlib
import hmac
import json
import os
import sys

_DIR = os.environ.get("RF_CHANNEL")
_STATE = {"key": None, "fd": None, "mac": "", "n": 0, "depth": 0, "ended": False, "pid": os.getpid()}


def _take_key():
    """Reads and removes the key (once per eval, by the first process that gets here)."""
    if not _DIR:
        return False
    path = os.path.join(_DIR, "key")
    try:
        with open(path, "rb") as handle:
            key = handle.read().strip()
        os.unlink(path)
    except OSError:
        return False
    if not key:
        return False
    _STATE["key"] = key
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
    _STATE["fd"] = os.open(os.path.join(_DIR, "results.jsonl"), flags, 0o600)
    return True


def _emit(record, _dumps=json.dumps, _mac=hmac.new, _sha=hashlib.sha256, _write=os.write, _pid=os.getpid):
    """Appends one chained, MACed record; a no-op in processes that hold no key. (The library functions are
    bound at load: a test rebinding json.dumps or os.write does not reach the channel.)"""
    key = _STATE["key"]
    if key is None or _pid() != _STATE["pid"]:
        return
    _STATE["n"] += 1
    record = dict(record, n=_STATE["n"], pid=_STATE["pid"])
    payload = _dumps(record, sort_keys=True, separators=(",", ":"))
    mac = _mac(key, (_STATE["mac"] + "\n" + payload).encode("utf-8"), _sha).hexdigest()
    _STATE["mac"] = mac
    _write(_STATE["fd"], (payload + "\t" + mac + "\n").encode("utf-8"))


def _forget_in_child():
    # A forked worker of the test runner replays its results to the parent (Django, multiprocessing): the parent
    # records them; the child must not write (nor hold the key).
    _STATE["key"] = None


def _own_modules_only():
    """Names of modules loaded from this directory other than the channel itself and sitecustomize."""
    here = os.path.dirname(os.path.abspath(__file__))
    odd = []
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if not path or name in (__name__, "sitecustomize"):
            continue
        try:
            if os.path.dirname(os.path.abspath(path)) == here:
                odd.append(name)
        except (TypeError, ValueError):
            continue
    if sys.modules.get(__name__) is not _SELF:
        odd.append(__name__ + " (replaced in sys.modules)")
    return odd


def _tampered():
    """What was changed of this module since it loaded (its functions rebound, a second copy imported)."""
    found = [name for name, fn in _ORIGINALS.items() if globals().get(name) is not fn]
    if _emit.__defaults__ is not _EMIT_DEFAULTS:
        found.append("_emit defaults")
    found += ["module " + name for name in _own_modules_only()]
    wrapped = _UNITTEST_WRAPPERS
    if wrapped:
        import unittest.result

        found += ["unittest " + n for n, fn in wrapped.items() if getattr(unittest.result.TestResult, n) is not fn]
    return found


def _finish(extra):
    if _STATE["ended"] or _STATE["key"] is None:
        return
    _STATE["ended"] = True
    changed = _tampered()
    if changed:
        _EMIT({"k": "tamper", "what": changed})
    _EMIT(dict({"k": "end"}, **extra))


# --- pytest -----------------------------------------------------------------------------------------------


def pytest_sessionstart(session):
    # A nested session (pytester's inline runs) reports tests that are not the repository's: only depth 1 counts.
    _STATE["depth"] += 1
    if _STATE["depth"] == 1 and _STATE["key"] is None and not _STATE["ended"] and _take_key():
        _EMIT({"k": "start", "runner": "pytest"})


def pytest_runtest_logreport(report):
    if _STATE["depth"] != 1:
        return
    xfail = hasattr(report, "wasxfail")
    if report.when == "call":
        if report.passed:
            status = "XPASS" if xfail else "PASSED"
        elif report.failed:
            status = "FAILED"
        else:
            status = "XFAIL" if xfail else "SKIPPED"
    elif report.failed:
        status = "ERROR"
    elif report.skipped:
        status = "XFAIL" if xfail else "SKIPPED"
    else:
        return
    _EMIT({"k": "test", "id": report.nodeid, "s": status, "when": report.when})


def pytest_sessionfinish(session, exitstatus):
    _STATE["depth"] -= 1
    if _STATE["depth"] == 0:
        _finish({"exit": int(exitstatus)})


# --- unittest (Django's runner, python -m unittest) ----------------------------------------------------------

_UNITTEST_WRAPPERS = {}
_UNITTEST_STATUS = {
    "addSuccess": "PASSED",
    "addFailure": "FAILED",
    "addError": "ERROR",
    "addSkip": "SKIPPED",
    "addExpectedFailure": "XFAIL",
    "addUnexpectedSuccess": "XPASS",
}


def install_unittest_hook():
    """Wraps unittest.TestResult's outcome methods; called by sitecustomize (RF_CHANNEL_MODE=unittest)."""
    if not _take_key():
        return
    import atexit
    import unittest.result

    base = unittest.result.TestResult
    for name, status in _UNITTEST_STATUS.items():
        original = getattr(base, name)

        def wrapper(self, test, *args, _original=original, _status=status, **kwargs):
            _EMIT({"k": "test", "id": str(test), "s": _status})
            return _original(self, test, *args, **kwargs)

        _UNITTEST_WRAPPERS[name] = wrapper
        setattr(base, name, wrapper)
    original_sub = base.addSubTest

    def add_sub_test(self, test, subtest, err, _original=original_sub):
        if err is not None:
            _EMIT({"k": "test", "id": str(test), "s": "FAILED", "sub": str(subtest)})
        return _original(self, test, subtest, err)

    _UNITTEST_WRAPPERS["addSubTest"] = add_sub_test
    base.addSubTest = add_sub_test
    _EMIT({"k": "start", "runner": "unittest"})
    atexit.register(_FINISH, {})


_SELF = sys.modules.get(__name__)
_EMIT = _emit
_FINISH = _finish
_EMIT_DEFAULTS = _emit.__defaults__
_ORIGINALS = {
    name: globals()[name]
    for name in (
        "_EMIT",
        "_FINISH",
        "_emit",
        "_finish",
        "_take_key",
        "_tampered",
        "pytest_sessionstart",
        "pytest_runtest_logreport",
        "pytest_sessionfinish",
        "install_unittest_hook",
    )
}
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)
