"""open, goto, scroll_up, scroll_down, create (windowed-tools spec §6). Each returns the exit status."""

import math
import os
import re
import sys
from pathlib import Path
from typing import List, Optional

from . import state
from .window import NoFileOpen, Window, say
from .window_v0 import V0State, read_lines

DIGITS = re.compile(r"^[0-9]+$")
NO_FILE = "No file open. Use the open command first."


def _open_usage() -> str:
    # The quotes arrived with 0.7 (and 1.x).
    return 'Usage: open "<file>"' if state.version() not in ("0.1", "0.3", "0.6", "0.6.1") else "Usage: open <file>"


def _open_usage_with_line() -> str:
    return 'Usage: open "<file>" [<line_number>]' if state.version() not in ("0.1", "0.3", "0.6", "0.6.1") else "Usage: open <file> [<line_number>]"


def _v0_centre(line: int, window: int) -> int:
    """Where v0 puts the window centre for a requested line: n + W/2 - floor(W/6), at least 1 (n + 34 for 100)."""
    return math.floor(max(line + window / 2 - math.floor(window / 6), 1))


# --- v0 -------------------------------------------------------------------------------------------------------


def open_v0(args: List[str]) -> int:
    path = args[0] if args else ""
    line = args[1] if len(args) > 1 else ""
    v0 = V0State()
    if path == "":
        say(_open_usage())
        return 0
    if line != "":
        if not DIGITS.match(line):
            say(_open_usage_with_line())
            say("Error: <line_number> must be a number")
            return 0
        if os.path.isfile(path):
            total = len(read_lines(path))
            requested = int(line)
            if requested > total:
                say("Warning: <line_number> ({}) is greater than the number of lines in the file ({})".format(line, total))
                say("Warning: Setting <line_number> to {}".format(total))
                centre = total
            elif requested < 1:
                say("Warning: <line_number> ({}) is less than 1".format(line))
                say("Warning: Setting <line_number> to 1")
                centre = 1
            else:
                centre = _v0_centre(requested, v0.window)
        else:
            # awk cannot read it and the `[ -gt ]` test then has no right operand (wording: mawk, bash).
            sys.stdout.flush()
            sys.stderr.write("awk: cannot open {} (No such file or directory)\n".format(path))
            sys.stderr.write("bash: [: {}: unary operator expected\n".format(line))
            sys.stderr.flush()
            if int(line) < 1:
                say("Warning: <line_number> ({}) is less than 1".format(line))
                say("Warning: Setting <line_number> to 1")
            centre = _v0_centre(int(line), v0.window)
    else:
        centre = v0.window / 2
    if os.path.isfile(path):
        v0.current_file = os.path.realpath(path)
        v0.current_line = centre
        v0.constrain()
        v0.show()
    elif os.path.isdir(path):
        say("Error: {} is a directory. You can only open files. Use cd or ls to navigate directories.".format(path))
    else:
        say("File {} not found".format(path))
    return 0


def goto_v0(args: List[str]) -> int:
    v0 = V0State()
    if len(args) > 1:
        say("goto allows only one line number at a time.")
        return 0
    if not v0.current_file:
        say(NO_FILE)
        return 0
    line = args[0] if args else ""
    if line == "":
        say("Usage: goto <line>")
        return 0
    if not DIGITS.match(line):
        say("Usage: goto <line>")
        say("Error: <line> must be a number")
        return 0
    total = len(read_lines(v0.current_file))
    if int(line) > total:
        say("Error: <line> must be less than or equal to {}".format(total))
        return 0
    v0.current_line = _v0_centre(int(line), v0.window)
    v0.constrain()
    v0.show()
    return 0


def scroll_v0(direction: int) -> int:
    v0 = V0State()
    if not v0.current_file:
        say(NO_FILE)
        return 0
    v0.current_line = v0.current_line + direction * (v0.window - v0.overlap)
    v0.constrain()
    v0.show()
    if state.version() == "0.7":
        _scroll_warning(v0)
    return 0


def _scroll_warning(v0: V0State) -> None:
    """0.7 only: from the third scroll in a row. `LAST_ACTION` is the previous step's action (set by the agent)."""
    count = int(v0.registry.get("SCROLL_COUNT", 0) or 0)
    if os.environ.get("LAST_ACTION", "") not in ("scroll_up", "scroll_down"):
        count = 0
    count += 1
    v0.registry.set("SCROLL_COUNT", count)
    if count >= int(os.environ.get("WARN_AFTER_SCROLLING_TIMES", "3")):
        say("")
        say("WARNING: Scrolling many times in a row is very inefficient.")
        say("If you know what you are looking for, use `search_file <pattern>` instead.")
        say("")


def create_v0(args: List[str]) -> int:
    path = args[0] if args else ""
    if path == "":
        say("Usage: create <filename>")
        return 0
    if os.path.exists(path):
        say("Error: File '{}' already exists.".format(path))
        return open_v0([path])
    try:
        with open(path, "wb") as handle:
            handle.write(b"\n")
    except OSError as error:
        sys.stdout.flush()
        sys.stderr.write("bash: {}: {}\n".format(path, error.strerror))
        sys.stderr.flush()
    return open_v0([path])


# --- v1 -------------------------------------------------------------------------------------------------------


def open_v1(args: List[str]) -> int:
    if not args:
        try:
            Window(report_errors=False).show()
            return 0
        except NoFileOpen:
            say('Usage: open "<file>"')
            return 1
    window = Window(args[0])
    line: Optional[int] = None
    if len(args) > 1:
        try:
            line = int(args[1])
        except ValueError:
            say('Usage: open "<file>" [<line_number>]')
            say("Error: <line_number> must be a number")
            return 1
        total = window.n_lines
        if line > total:
            say("Warning: <line_number> ({}) is greater than the number of lines in the file ({})".format(line, total))
            say("Warning: Setting <line_number> to {}".format(total))
            line = total
        elif line < 1:
            say("Warning: <line_number> ({}) is less than 1".format(line))
            say("Warning: Setting <line_number> to 1")
            line = 1
    else:
        # Re-opening keeps the stored top and then moves it up about a sixth of a window: upstream's quirk.
        line = window.first_line
    window.goto(line - 1)
    window.show()
    return 0


def goto_v1(args: List[str]) -> int:
    if len(args) > 1:
        say("goto allows only one line number at a time.")
        return 1
    if not args:
        say("Usage: goto <line>")
        return 1
    try:
        line = int(args[0])
    except ValueError:
        say("Usage: goto <line>")
        say("Error: <line> must be a number")
        return 1
    window = Window()
    if line > window.n_lines:
        say("Error: <line> must be less than or equal to {}".format(window.n_lines))
        return 1
    window.goto(line - 1)
    window.show()
    return 0


def scroll_v1(direction: int) -> int:
    window = Window()
    window.scroll(direction * window.window)
    window.show()
    return 0


def create_v1(args: List[str]) -> int:
    if not args:
        say("Usage: create <filename>")
        return 1
    path = Path(args[0])
    if not path.parent.is_dir():
        path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        say("Warning: File '{}' already exists.".format(path))
        return 1
    # 1.0 wrote a newline (one empty line shows as "1:"); 1.1 creates an empty file.
    if state.version() in ("1.0-dev", "1.0"):
        path.write_text("\n")
    else:
        path.touch()
    window = Window(path)
    window.first_line = 0
    window.show()
    return 0


def open_tool(args: List[str]) -> int:
    return open_v0(args) if state.is_v0() else open_v1(args)


def goto_tool(args: List[str]) -> int:
    return goto_v0(args) if state.is_v0() else goto_v1(args)


def scroll_down_tool(_args: List[str]) -> int:
    return scroll_v0(1) if state.is_v0() else scroll_v1(1)


def scroll_up_tool(_args: List[str]) -> int:
    return scroll_v0(-1) if state.is_v0() else scroll_v1(-1)


def create_tool(args: List[str]) -> int:
    return create_v0(args) if state.is_v0() else create_v1(args)
