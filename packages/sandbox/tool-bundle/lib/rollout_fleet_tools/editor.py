"""str_replace_editor: view / create / str_replace / insert / undo_edit.

Observable behaviour (stdout text, exit codes, `cat -n` blocks, snippet windows, directory listing) follows
SWE-agent's `tools/edit_anthropic/bin/str_replace_editor` with the default registry knobs, as specified in
rollout-fleet's tools spec §3. Deliberate differences (see ../../README.md):
- `undo_edit` works: history is persisted per file (editor_history.py); `create` starts a fresh history;
- a `str_replace` whose snippet range is empty prints an empty snippet instead of an AssertionError traceback;
- the directory listing runs `find` without a shell, so unusual characters in the path cannot break it;
- the tree-sitter file map (USE_FILEMAP), the linter (USE_LINTER) and window expansion are not implemented:
  that is what upstream prints when tree-sitter/flake8 are missing and the expansion knobs are 0.
"""

import io
import sys
from pathlib import Path
from typing import List, NoReturn, Optional, Tuple

from . import editor_history
from .editor_args import EditorArgs, ViewRange, parse_args

TOOL_NAME = "str_replace_editor"
MAX_RESPONSE_LEN = 16000
TRUNCATED_MESSAGE = (
    "<response clipped><NOTE>To save on context only part of this file has been shown to you. You should retry "
    "this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what "
    "you are looking for.</NOTE>"
)
SNIPPET_LINES = 4
# Same order as upstream: platform default, UTF-8, Latin-1 (always succeeds), UTF-8 with replacement.
READ_ENCODINGS = [(None, None), ("utf-8", None), ("latin-1", None), ("utf-8", "replace")]  # type: List[Tuple[Optional[str], Optional[str]]]


def emit(text: str) -> None:
    """print() to a UTF-8 stdout; surrogateescape so bytes that came in through argv go back out unchanged."""
    sys.stdout.buffer.write((text + "\n").encode("utf-8", "surrogateescape"))
    sys.stdout.buffer.flush()


def fail(code: int, message: str) -> NoReturn:
    emit(message)
    sys.exit(code)


def maybe_truncate(text: str) -> str:
    return text if len(text) <= MAX_RESPONSE_LEN else text[:MAX_RESPONSE_LEN] + TRUNCATED_MESSAGE


def block(text: str, descriptor: str, first: int = 1) -> str:
    """The `cat -n` block: clip, expand tabs, number from `first` (width 6, TAB), header line, trailing newline."""
    lines = maybe_truncate(text).expandtabs().split("\n")
    numbered = "\n".join("{:6}\t{}".format(index + first, line) for index, line in enumerate(lines))
    return "Here's the result of running `cat -n` on {}:\n".format(descriptor) + numbered + "\n"


class FileContent(object):
    def __init__(self, raw: bytes, text: str, encoding: Optional[str]) -> None:
        self.raw = raw
        self.text = text
        self.encoding = encoding


def decode(raw: bytes, path: Path) -> FileContent:
    """Decode like pathlib's read_text (universal newlines), trying READ_ENCODINGS in order."""
    exception = None  # type: Optional[UnicodeDecodeError]
    for encoding, errors in READ_ENCODINGS:
        try:
            text = io.TextIOWrapper(io.BytesIO(raw), encoding=encoding, errors=errors).read()
        except UnicodeDecodeError as error:
            exception = error
            continue
        return FileContent(raw, text, encoding)
    fail(19, "Ran into UnicodeDecodeError {} while trying to read {}".format(exception, path))


def read_file(path: Path) -> FileContent:
    return decode(path.read_bytes(), path)


def write_file(path: Path, text: str, encoding: Optional[str]) -> None:
    try:
        path.write_text(text, encoding=encoding or "utf-8")
    except Exception as error:  # noqa: BLE001 - the message is the observation, whatever went wrong
        fail(20, "Ran into {} while trying to write to {}".format(error, path))


def validate_path(command: str, path: Path) -> None:
    if not path.is_absolute():
        fail(6, "The path {} is not an absolute path, it should start with `/`. Maybe you meant {}?".format(path, Path.cwd() / path))
    if not path.exists() and command != "create":
        fail(7, "The path {} does not exist. Please provide a valid path.".format(path))
    if path.exists() and command == "create":
        fail(8, "File already exists at: {}. Cannot overwrite files using command `create`.".format(path))
    if path.is_dir() and command != "view":
        fail(9, "The path {} is a directory and only the `view` command can be used on directories".format(path))


def view_directory(path: Path) -> None:
    import subprocess  # only directory views need it; keeps every other invocation's start-up short

    # Same find expression as upstream, but as an argv list instead of an unquoted shell string.
    out = subprocess.run(
        ["find", str(path), "-maxdepth", "2", "-not", "-path", "*/\\.*"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    if out.stderr:
        return
    listing = out.stdout.decode("utf-8", "surrogateescape")
    emit("Here's the files and directories up to 2 levels deep in {}, excluding hidden items:\n{}\n".format(path, listing))


def view(path: Path, view_range: Optional[ViewRange]) -> None:
    if path.is_dir():
        if view_range:
            fail(10, "The `view_range` parameter is not allowed when `path` points to a directory.")
        view_directory(path)
        return
    text = read_file(path).text
    first = 1
    if view_range:
        if len(view_range) != 2 or not all(isinstance(item, int) for item in view_range):
            fail(11, "Invalid `view_range`. It should be a list of two integers.")
        lines = text.split("\n")
        count = len(lines)
        start, end = int(view_range[0]), int(view_range[1])
        if start < 1 or start > count:
            fail(12, "Invalid `view_range`: {}. Its first element `{}` should be within the range of lines of the file: {}".format(view_range, start, [1, count]))
        if end > count:
            fail(13, "Invalid `view_range`: {}. Its second element `{}` should be smaller than the number of lines in the file: `{}`".format(view_range, end, count))
        if end != -1 and end < start:
            fail(14, "Invalid `view_range`: {}. Its second element `{}` should be larger or equal than its first `{}`".format(view_range, end, start))
        if end == -1:
            end = count
        text = "\n".join(lines[start - 1:end])
        first = start
    emit(block(text, str(path), first))


def create(path: Path, file_text: str) -> None:
    if not path.parent.exists():
        fail(21, "The parent directory {} does not exist. Please create it first.".format(path.parent))
    write_file(path, file_text, None)
    # A created file starts a new history: undoing "create" has nothing earlier to restore (documented choice).
    editor_history.clear(str(path))
    emit("File created successfully at: {}".format(path))


def str_replace(path: Path, old_str: str, new_str: Optional[str]) -> None:
    original = read_file(path)
    text = original.text.expandtabs()
    old = old_str.expandtabs()
    new = new_str.expandtabs() if new_str is not None else ""

    occurrences = text.count(old)
    if occurrences == 0:
        fail(15, "No replacement was performed, old_str `{}` did not appear verbatim in {}.".format(old, path))
    if occurrences > 1:
        lines = [index + 1 for index, line in enumerate(text.split("\n")) if old in line]
        fail(16, "No replacement was performed. Multiple occurrences of old_str `{}` in lines {}. Please ensure it is unique".format(old, lines))
    if new == old:
        fail(161, "No replacement was performed, old_str `{}` is the same as new_str `{}`.".format(old, new))

    new_text = text.replace(old, new)
    write_file(path, new_text, original.encoding)
    editor_history.push(str(path), original.raw)

    edited_line = text.split(old)[0].count("\n")
    start = max(1, edited_line - SNIPPET_LINES)
    end = min(edited_line + SNIPPET_LINES + new.count("\n"), len(new_text.splitlines()))
    # Upstream asserts 1 <= start <= end <= len(lines) here and crashes after writing; slicing clips instead,
    # so an empty range prints an empty snippet.
    snippet = "\n".join(new_text.split("\n")[start - 1:end])
    emit(
        "The file {} has been edited. ".format(path)
        + block(snippet, "a snippet of {}".format(path), start)
        + "Review the changes and make sure they are as expected. Edit the file again if necessary."
    )


def insert(path: Path, insert_line: int, new_str: str) -> None:
    original = read_file(path)
    text = original.text.expandtabs()
    new = new_str.expandtabs()
    lines = text.split("\n")
    count = len(lines)
    if insert_line < 0 or insert_line > count:
        fail(17, "Invalid `insert_line` parameter: {}. It should be within the range of lines of the file: {}".format(insert_line, [0, count]))

    new_lines = new.split("\n")
    write_file(path, "\n".join(lines[:insert_line] + new_lines + lines[insert_line:]), original.encoding)
    editor_history.push(str(path), original.raw)

    snippet = "\n".join(
        lines[max(0, insert_line - SNIPPET_LINES):insert_line] + new_lines + lines[insert_line:insert_line + SNIPPET_LINES]
    )
    emit(
        "The file {} has been edited. ".format(path)
        + block(snippet, "a snippet of the edited file", max(1, insert_line - SNIPPET_LINES + 1))
        + "Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). "
        "Edit the file again if necessary."
    )


def undo_edit(path: Path) -> None:
    key = str(path)
    previous = editor_history.peek(key)
    if previous is None:
        fail(18, "No edit history found for {}.".format(path))
    try:
        path.write_bytes(previous)
    except Exception as error:  # noqa: BLE001
        fail(20, "Ran into {} while trying to write to {}".format(error, path))
    # Only forget the entry once the file really holds it again.
    editor_history.drop_last(key)
    emit("Last edit to {} undone successfully. {}".format(path, block(decode(previous, path).text, key)))


def run(args: EditorArgs) -> None:
    command = args.command or ""
    path = Path(args.path or "")
    validate_path(command, path)
    if command == "view":
        view(path, args.view_range)
    elif command == "create":
        if args.file_text is None:
            fail(1, "Parameter `file_text` is required for command: create")
        create(path, args.file_text)
    elif command == "str_replace":
        if args.old_str is None:
            fail(2, "Parameter `old_str` is required for command: str_replace")
        str_replace(path, args.old_str, args.new_str)
    elif command == "insert":
        if args.insert_line is None:
            fail(3, "Parameter `insert_line` is required for command: insert")
        if args.new_str is None:
            fail(4, "Parameter `new_str` is required for command: insert")
        insert(path, args.insert_line, args.new_str)
    elif command == "undo_edit":
        undo_edit(path)
    else:
        fail(
            5,
            'Unrecognized command {}. The allowed commands for the {} tool are: "view", "create", "str_replace", '
            '"insert", "undo_edit"'.format(command, TOOL_NAME),
        )


def main(argv: Optional[List[str]] = None) -> None:
    run(parse_args(sys.argv[1:] if argv is None else argv))
