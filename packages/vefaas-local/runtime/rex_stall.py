"""vefaas-local fault `shellStall` (src/faults/fault-config.ts), not part of SWE-ReX.

The sandbox's shell freezes for a while right after a command's prompt came back, when the server goes on to
fetch the exit code: what a starved CPU does to the reference's 1 s exit-code wait (it runs out, the
observation has exit_code null and the late `EXITCODESTART…END` and prompt stay for the next command). Every
process of the shell's terminal session is stopped (SIGSTOP), the command's children too, and continued after
`ms`. Only the gateway sets the header (it strips it from clients), and only while the fault is configured.
"""

import json
import os
import re
import signal
import threading

HEADER = "x-vefaas-local-shell-stall"


def parse(value):
    """The header's `{"ms": N, "match": REGEX|null}`, or None (no header, or one that does not parse)."""
    if not value:
        return None
    try:
        stall = json.loads(value)
        ms = int(stall["ms"])
        match = stall.get("match")
        return {"ms": max(0, ms), "match": re.compile(match) if match else None}
    except (ValueError, KeyError, TypeError, re.error):
        return None


def applies(stall, command):
    return stall is not None and (stall["match"] is None or stall["match"].search(command) is not None)


def freeze(session_id, ms):
    """Stops the processes of terminal session `session_id` (the shell's pid) and continues them after `ms`."""
    # Processes the model stopped itself (Ctrl-Z jobs) stay stopped: only what was running is continued.
    stopped = [pid for pid, state in _members(session_id) if state not in ("T", "t", "Z")]
    for pid in stopped:
        _kill(pid, signal.SIGSTOP)
    timer = threading.Timer(ms / 1000.0, _resume, [stopped])
    timer.daemon = True
    timer.start()


def _resume(pids):
    for pid in pids:
        _kill(pid, signal.SIGCONT)


def _members(session_id):
    members = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/{}/stat".format(name)) as f:
                stat = f.read()
        except OSError:
            continue
        # pid (comm) state ppid pgrp session ...; comm may contain spaces and parentheses.
        fields = stat[stat.rfind(")") + 2:].split()
        if len(fields) > 3 and int(fields[3]) == session_id:
            members.append((int(name), fields[0]))
    return members


def _kill(pid, sig):
    try:
        os.kill(pid, sig)
    except OSError:
        pass
