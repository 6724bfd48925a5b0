"""submit (windowed-tools spec §10): the repository's changes as a patch.

In `$ROOT` (the repository; exported at install), reverse-apply a non-empty `~/test.patch`, `git add -A`, and
write `git diff --cached` to the patch file. 0.x writes `$ROOT/model.patch` and prints it between `<<SUBMISSION||`
and `||SUBMISSION>>`; 1.0–1.1 write `~/model.patch` and print it between two `<<SWE_AGENT_SUBMISSION>>` lines;
main prints only the marker (the agent reads the file).
"""

import os
import subprocess
import sys
from pathlib import Path
from typing import List

from . import state

V1_MARKER = "<<SWE_AGENT_SUBMISSION>>"


def submit(_args: List[str]) -> int:
    root = os.environ.get("ROOT") or str(state.home())
    os.chdir(root)
    test_patch = state.home() / "test.patch"
    sys.stdout.flush()
    if test_patch.is_file() and test_patch.stat().st_size > 0:
        with open(test_patch, "rb") as handle:
            subprocess.run(["git", "apply", "-R"], stdin=handle)
    subprocess.run(["git", "add", "-A"])
    patch = subprocess.run(["git", "diff", "--cached"], stdout=subprocess.PIPE).stdout
    version = state.version()
    out = sys.stdout.buffer
    if state.is_v0():
        Path(root, "model.patch").write_bytes(patch)
        out.write(b"<<SUBMISSION||\n" + patch + b"||SUBMISSION>>\n")
    else:
        (state.home() / "model.patch").write_bytes(patch)
        marker = V1_MARKER.encode() + b"\n"
        out.write(marker if version == "main" else marker + patch + marker)
    out.flush()
    return 0
