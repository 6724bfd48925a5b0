"""Command line of str_replace_editor.

Accepts the SWE-agent form `str_replace_editor <command> <path> [--opts]` and the R2E-Gym / seed form
`str_replace_editor <command> --path <path> [--opts]`. Usage errors go to stderr with exit 2, as argparse does.

Deliberate differences from argparse, so that shell-quoted model strings round-trip:
- an option value is taken verbatim even when it starts with `-` (argparse refuses `--new_str -x`);
  only a value spelled exactly like one of our own option names counts as "value missing", which keeps
  argparse's behaviour for empty template slots such as `--old_str  --new_str x`;
- `--view_range` also accepts one argument (`'[1, 10]'`, `1,10`, `'1 10'`), parsed the way R2E-Gym's
  editor does; a one-argument value that is not two integers is reported by the editor (exit 11).
"""

import os
import re
import sys
from typing import Dict, List, Optional, Union

VALUE_OPTIONS = ("--path", "--file_text", "--old_str", "--new_str", "--insert_line", "--view_range")
HELP_OPTIONS = ("-h", "--help")
# A single --view_range value containing one of these is the one-argument form.
_ONE_ARG_VIEW_RANGE = re.compile(r"[\[\](),\s]")

ViewRange = List[Union[int, str]]


class EditorArgs(object):
    def __init__(self) -> None:
        self.command = None  # type: Optional[str]
        self.path = None  # type: Optional[str]
        self.file_text = None  # type: Optional[str]
        self.old_str = None  # type: Optional[str]
        self.new_str = None  # type: Optional[str]
        self.insert_line = None  # type: Optional[int]
        self.view_range = None  # type: Optional[ViewRange]


def _prog() -> str:
    return os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else "str_replace_editor"


def _usage() -> str:
    return (
        "usage: {} [-h] [--path PATH] [--file_text FILE_TEXT] [--view_range VIEW_RANGE [VIEW_RANGE]] "
        "[--old_str OLD_STR] [--new_str NEW_STR] [--insert_line INSERT_LINE] command [path]\n"
    ).format(_prog())


def _usage_error(message: str) -> None:
    sys.stderr.write(_usage())
    sys.stderr.write("{}: error: {}\n".format(_prog(), message))
    sys.stderr.flush()
    sys.exit(2)


def _help() -> None:
    sys.stdout.write(_usage())
    sys.stdout.write(
        "\ncommands: view, create, str_replace, insert, undo_edit\n"
        "path: absolute path of the file or directory (positional or --path)\n"
        "--view_range: two integers (`1 10`) or one argument (`'[1, 10]'`, `1,10`)\n"
    )
    sys.stdout.flush()
    sys.exit(0)


def _resolve_option(name: str) -> str:
    """Exact option name, or a unique prefix of one (argparse's allow_abbrev)."""
    if name in VALUE_OPTIONS:
        return name
    matches = [option for option in VALUE_OPTIONS if option.startswith(name)]
    if len(matches) == 1:
        return matches[0]
    if len(matches) > 1:
        _usage_error("ambiguous option: {} could match {}".format(name, ", ".join(matches)))
    _usage_error("unrecognized arguments: {}".format(name))
    return name  # unreachable


def _is_value(token: Optional[str]) -> bool:
    return token is not None and token not in VALUE_OPTIONS and token not in HELP_OPTIONS


def _to_int(option: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        _usage_error("argument {}: invalid int value: {!r}".format(option, text))
        return 0  # unreachable


def parse_view_range_text(text: str) -> ViewRange:
    """One-argument form: strip brackets, split on commas/whitespace, convert what is an integer."""
    tokens = [token for token in re.split(r"[,\s]+", re.sub(r"[\[\]()]", " ", text)) if token]
    if not tokens:
        # Keep something truthy so the editor reports "Invalid `view_range`" instead of ignoring it.
        return [text]
    parsed = []  # type: ViewRange
    for token in tokens:
        try:
            parsed.append(int(token))
        except ValueError:
            parsed.append(token)
    return parsed


def parse_args(argv: List[str]) -> EditorArgs:
    args = EditorArgs()
    values = {}  # type: Dict[str, object]
    positionals = []  # type: List[str]
    i = 0
    while i < len(argv):
        token = argv[i]
        if token == "--":
            positionals.extend(argv[i + 1:])
            break
        if token in HELP_OPTIONS:
            _help()
        if not (token.startswith("--") and len(token) > 2):
            positionals.append(token)
            i += 1
            continue
        name, has_inline, inline = token.partition("=")
        option = _resolve_option(name)
        if option == "--view_range":
            if has_inline:
                values[option] = parse_view_range_text(inline)
                i += 1
                continue
            first = argv[i + 1] if i + 1 < len(argv) else None
            if not _is_value(first):
                _usage_error("argument --view_range: expected 2 arguments")
            assert first is not None
            if _ONE_ARG_VIEW_RANGE.search(first):
                values[option] = parse_view_range_text(first)
                i += 2
                continue
            second = argv[i + 2] if i + 2 < len(argv) else None
            if not _is_value(second):
                _usage_error("argument --view_range: expected 2 arguments")
            assert second is not None
            values[option] = [_to_int(option, first), _to_int(option, second)]
            i += 3
            continue
        if has_inline:
            value = inline
            i += 1
        else:
            following = argv[i + 1] if i + 1 < len(argv) else None
            if not _is_value(following):
                _usage_error("argument {}: expected one argument".format(option))
            assert following is not None
            value = following
            i += 2
        values[option] = _to_int(option, value) if option == "--insert_line" else value

    if "--path" in values:
        if not positionals:
            _usage_error("the following arguments are required: command")
        if len(positionals) > 1:
            _usage_error("unrecognized arguments: {}".format(" ".join(positionals[1:])))
        args.command = positionals[0]
        args.path = str(values["--path"])
    else:
        if not positionals:
            _usage_error("the following arguments are required: command, path")
        if len(positionals) == 1:
            _usage_error("the following arguments are required: path")
        if len(positionals) > 2:
            _usage_error("unrecognized arguments: {}".format(" ".join(positionals[2:])))
        args.command, args.path = positionals[0], positionals[1]

    args.file_text = values.get("--file_text")  # type: ignore[assignment]
    args.old_str = values.get("--old_str")  # type: ignore[assignment]
    args.new_str = values.get("--new_str")  # type: ignore[assignment]
    args.insert_line = values.get("--insert_line")  # type: ignore[assignment]
    args.view_range = values.get("--view_range")  # type: ignore[assignment]
    return args
