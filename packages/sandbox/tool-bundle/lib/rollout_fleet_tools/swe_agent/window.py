"""The v1 file window (SWE-agent 1.x `WindowedFile`), windowed-tools spec §4–§6.

Line numbers are 0-based inside, 1-based on screen. The file is read as UTF-8 with universal newlines and written
with LF, so an edit converts CRLF files (as upstream does). Line counts use `str.splitlines()` while the shown
lines come from splitting on "\\n" — both quirks are visible in recorded observations.
"""

import sys
from pathlib import Path
from typing import List, NoReturn, Optional, Tuple, Union

from . import state


class NoFileOpen(Exception):
    """No path was given and the registry names no current file."""


class TextNotFound(Exception):
    """The search text is not where the edit looked for it."""


def say(text: str) -> None:
    sys.stdout.write(text + "\n")
    sys.stdout.flush()


def quit_with(message: str, code: int = 1) -> NoReturn:
    say(message)
    sys.exit(code)


class Window:
    """One open file and where its window starts (`first_line`), persisted in the registry."""

    def __init__(self, path: Optional[Union[str, Path]] = None, *, report_errors: bool = True) -> None:
        self.registry = state.Registry()
        chosen = self.registry.get_if_none(path, "CURRENT_FILE")
        if not chosen:
            if report_errors:
                quit_with("No file open. Use the open command first.")
            raise NoFileOpen()
        self.path = Path(chosen)
        if self.path.is_dir():
            message = "Error: {} is a directory. You can only open files. Use cd or ls to navigate directories.".format(self.path)
            if report_errors:
                quit_with(message)
            raise IsADirectoryError(message)
        if not self.path.exists():
            message = "Error: File {} not found".format(self.path)
            if report_errors:
                quit_with(message)
            raise FileNotFoundError(message)
        # Upstream records the file before anything else can fail, so a later error still switches files.
        self.registry.set("CURRENT_FILE", str(self.path.resolve()))
        self.window = state.window_size(self.registry)
        self.overlap = state.overlap_size(self.registry)
        self._first = 0
        self._previous_first = 0
        self.first_line = int(self.registry.get("FIRST_LINE", 0))
        self._previous_text = self.text
        self._previous_first = self.first_line

    # --- the file ---------------------------------------------------------------------------------------------

    @property
    def text(self) -> str:
        return self.path.read_text(encoding="utf-8")

    @text.setter
    def text(self, new_text: str) -> None:
        self._previous_text = self.text
        self.path.write_text(new_text, encoding="utf-8")

    @property
    def n_lines(self) -> int:
        return len(self.text.splitlines())

    # --- the window -------------------------------------------------------------------------------------------

    @property
    def first_line(self) -> int:
        return self._first

    @first_line.setter
    def first_line(self, value: Union[int, float]) -> None:
        self._previous_first = self._first
        # V1a (1.0, 1.1) clamps one line too early, which hides the last line of a long file; main fixed it.
        slack = 0 if state.version() == "main" else 1
        self._first = max(0, min(int(value), self.n_lines - slack - self.window))
        self.registry.set("FIRST_LINE", self._first)

    @property
    def line_range(self) -> Tuple[int, int]:
        return self._first, min(self._first + self.window - 1, self.n_lines - 1)

    def goto(self, line: int) -> None:
        """Put `line` (0-based) about a sixth of a window below the top."""
        self.first_line = line - self.window * (1 / 6)

    def scroll(self, lines: int) -> None:
        if lines > 0:
            self.first_line = self.first_line + lines - self.overlap
        elif lines < 0:
            self.first_line = self.first_line + lines + self.overlap

    def window_text(self, *, decorated: bool = False) -> str:
        start, end = self.line_range
        total = self.n_lines
        shown = self.text.split("\n")[start:end + 1]
        if not decorated:
            return "\n".join(shown)
        out = ["[File: {} ({} lines total)]".format(self.path, total)]
        if start > 0:
            out.append("({} more lines above)".format(start))
        out.extend("{}:{}".format(start + offset + 1, line) for offset, line in enumerate(shown))
        if end < total - 1:
            out.append("({} more lines below)".format(total - end - 1))
        return "\n".join(out)

    def show(self) -> None:
        say(self.window_text(decorated=True))

    # --- edits ------------------------------------------------------------------------------------------------

    def replace_lines(self, new_text: str, line_range: Optional[Tuple[int, int]] = None) -> None:
        """Lines start..stop (0-based, inclusive; Python slice semantics) become `new_text`'s lines."""
        lines = self.text.split("\n")
        start, stop = line_range if line_range is not None else self.line_range
        lines[start:stop + 1] = new_text.split("\n") if new_text else []
        self.text = "\n".join(lines)

    def undo(self) -> None:
        self.text = self._previous_text
        self.first_line = self._previous_first

    def occurrences(self, search: str) -> List[int]:
        """1-based line of the start of each non-overlapping occurrence of `search` in the file."""
        text = self.text
        found = []
        at = text.find(search)
        while at != -1:
            found.append(len(text[:at].split("\n")))
            at = text.find(search, at + len(search))
        return found

    def replace_in_window(self, search: str, replacement: str) -> Tuple[int, int, int]:
        """Replace in the shown lines; returns (first replaced line 0-based, search lines, replacement lines)."""
        shown = self.window_text()
        at = shown.find(search)
        if at == -1:
            raise TextNotFound()
        first = self.line_range[0] + len(shown[:at].split("\n")) - 1
        self.replace_lines(shown.replace(search, replacement))
        self.goto(first)
        return first, len(search.split("\n")), len(replacement.split("\n"))

    def replace_everywhere(self, search: str, replacement: str) -> Tuple[int, int, int, int]:
        """Replace in the whole file; the "first line" is 1-based here, as upstream computes it."""
        text = self.text
        hits = self.occurrences(search)
        if not hits:
            raise TextNotFound()
        first = len(text[:text.find(search)].split("\n"))
        self.text = text.replace(search, replacement)
        self.goto(first)
        return first, len(search.split("\n")), len(replacement.split("\n")), len(hits)

    def insert(self, text: str, line: Optional[int]) -> Tuple[int, int]:
        """Returns (first inserted line, lines added). `line` None appends, below 0 prepends."""
        if not text:
            return (self.n_lines if line is None else line), 0
        if text.endswith("\n"):
            text = text[:-1]
        current = self.text
        if line is None:
            at = self.n_lines
            if not current:
                updated = text
            else:
                updated = (current[:-1] if current.endswith("\n") else current) + "\n" + text
        elif line < 0:
            at = 0
            if not current:
                updated = text
            else:
                updated = text + "\n" + (current[1:] if current.startswith("\n") else current)
        else:
            at = line
            lines = current.split("\n")
            lines.insert(line, text)
            updated = "\n".join(lines)
        self.text = updated
        self.goto(at)
        return at, len(text.split("\n"))
