"""The v0 file window (SWE-agent 0.x `_print` / `_constrain_line` shell functions), windowed-tools spec §5.

v0 keeps the window *centre* C (1-based, may be fractional for odd windows), not its top. Arithmetic follows jq:
`floor`, and `round` rounding half away from zero (Python's round() would round half to even). Lines are bytes as
`grep -n $` prints them (a CR stays); the total is awk's record count (an unterminated last line counts).
"""

import math
import os
import sys
from typing import List, Optional, Union

from . import state

Number = Union[int, float]
BINARY_NOTICE = b"Binary file (standard input) matches"


def jq_number(value: Number) -> Number:
    """jq prints integral numbers without a fraction; keep ints as ints."""
    return int(value) if float(value).is_integer() else value


def jq_round(value: float) -> int:
    return int(math.floor(value + 0.5)) if value >= 0 else -int(math.floor(-value + 0.5))


def write(data: bytes) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


def say(text: str) -> None:
    write((text + "\n").encode("utf-8", "surrogateescape"))


def read_lines(path: str) -> List[bytes]:
    """The file's lines without their LF (awk's records); an unterminated last line is a line."""
    with open(path, "rb") as handle:
        data = handle.read()
    if not data:
        return []
    lines = data.split(b"\n")
    if data.endswith(b"\n"):
        lines.pop()
    return lines


def total_lines(path: str) -> int:
    return len(read_lines(path))


class V0State:
    """CURRENT_FILE / CURRENT_LINE / WINDOW / OVERLAP as the v0 functions kept them (exported shell variables)."""

    def __init__(self) -> None:
        self.registry = state.Registry()

    @property
    def current_file(self) -> str:
        return str(self.registry.get("CURRENT_FILE", "") or "")

    @current_file.setter
    def current_file(self, path: str) -> None:
        self.registry.set("CURRENT_FILE", path)

    @property
    def current_line(self) -> Number:
        value = self.registry.get("CURRENT_LINE", 0)
        number = float(value)
        return jq_number(number)

    @current_line.setter
    def current_line(self, value: Number) -> None:
        self.registry.set("CURRENT_LINE", jq_number(value))

    @property
    def window(self) -> int:
        return int(self.registry.get("WINDOW", 100))

    @property
    def overlap(self) -> int:
        return int(self.registry.get("OVERLAP", 2))

    def constrain(self, window: Optional[int] = None) -> None:
        """`_constrain_line`: keep the centre half a window inside the file."""
        size = self.window if window is None else window
        half = math.floor(size / 2)
        total = total_lines(self.current_file)
        centre = min(self.current_line, total - half)
        self.current_line = max(centre, half)

    def render(self, window: Optional[int] = None) -> bytes:
        """`_print`: header, lines above, the numbered lines, lines below."""
        size = self.window if window is None else window
        path = self.current_file
        lines = read_lines(path)
        total = len(lines)
        centre = self.current_line
        out = [("[File: %s (%d lines total)]" % (os.path.realpath(path), total)).encode("utf-8", "surrogateescape")]
        above = math.floor(max(0, centre - size / 2))
        below = jq_round(max(0, total - centre - size / 2))
        if above > 0:
            out.append(b"(%d more lines above)" % above)
        with open(path, "rb") as handle:
            binary = b"\0" in handle.read()
        if binary:
            out.append(BINARY_NOTICE)
        else:
            head = math.floor(max(centre + size / 2, size / 2))
            numbered = [b"%d:%s" % (index + 1, line) for index, line in enumerate(lines)][:head]
            out.extend(numbered[-size:] if size > 0 else [])
        if below > 0:
            out.append(b"(%d more lines below)" % below)
        return b"".join(line + b"\n" for line in out)

    def show(self, window: Optional[int] = None) -> None:
        write(self.render(window))
