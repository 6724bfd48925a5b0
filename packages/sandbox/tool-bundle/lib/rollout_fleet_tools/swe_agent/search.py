"""find_file, search_dir, search_file (windowed-tools spec §9; the same in 0.x and 1.x). `find` and `grep` do the
matching, as upstream's shell functions do, so patterns mean what they meant there (a glob for find_file, a basic
regular expression for the searches). Each returns the exit status (0, as the shell functions did)."""

import os
import subprocess
import sys
from typing import List

from . import state
from .window import say


def _run(argv: List[str]) -> bytes:
    """stdout of a command; its stderr goes where the tool's goes (the session merges them)."""
    sys.stdout.flush()
    return subprocess.run(argv, stdout=subprocess.PIPE).stdout


def _lines(output: bytes) -> List[bytes]:
    """What `echo "$(...)"` iterates over: trailing newlines dropped, then one entry per line."""
    text = output.rstrip(b"\n")
    return text.split(b"\n") if text else []


def _write_lines(lines: List[bytes]) -> None:
    sys.stdout.flush()
    sys.stdout.buffer.write(b"".join(line + b"\n" for line in lines))
    sys.stdout.buffer.flush()


def _target_dir(args: List[str], usage: str):
    """(term, dir) or None after printing the error the shell function printed."""
    if len(args) == 1:
        return args[0], "./"
    if len(args) == 2:
        if os.path.isdir(args[1]):
            return args[0], args[1]
        say("Directory {} not found".format(args[1]))
        return None
    say(usage)
    return None


def find_file(args: List[str]) -> int:
    chosen = _target_dir(args, "Usage: find_file <file_name> [<dir>]")
    if chosen is None:
        return 0
    name, directory = chosen
    directory = os.path.realpath(directory)
    matches = _lines(_run(["find", directory, "-type", "f", "-name", name]))
    if not matches:
        say('No matches found for "{}" in {}'.format(name, directory))
        return 0
    say('Found {} matches for "{}" in {}:'.format(len(matches), name, directory))
    _write_lines(matches)
    return 0


def search_dir(args: List[str]) -> int:
    chosen = _target_dir(args, "Usage: search_dir <search_term> [<dir>]")
    if chosen is None:
        return 0
    term, directory = chosen
    directory = os.path.realpath(directory)
    found = _run(["find", directory, "-type", "f", "!", "-path", "*/.*", "-exec", "grep", "-nIH", "--", term, "{}", "+"])
    # `cut -d: -f1 | sort | uniq -c`: matching lines per file, files in byte order (C.UTF-8 collation).
    files = sorted(line.split(b":", 1)[0] for line in _lines(found))
    counts: List[List[object]] = []
    for name in files:
        if counts and counts[-1][0] == name:
            counts[-1][1] = int(counts[-1][1]) + 1  # type: ignore[call-overload]
        else:
            counts.append([name, 1])
    if not counts:
        say('No matches found for "{}" in {}'.format(term, directory))
        return 0
    if len(counts) > 100:
        say('More than {} files matched for "{}" in {}. Please narrow your search.'.format(len(counts), term, directory))
        return 0
    total = sum(int(count) for _name, count in counts)  # type: ignore[call-overload]
    say('Found {} matches for "{}" in {}:'.format(total, term, directory))
    # awk's `$2` is the path up to its first blank.
    _write_lines([(bytes(name).split()[0] if bytes(name).split() else b"") + b" (%d matches)" % int(count)  # type: ignore[call-overload]
                  for name, count in counts])
    say('End of matches for "{}" in {}'.format(term, directory))
    return 0


def search_file(args: List[str]) -> int:
    term = args[0] if args else ""
    if term == "":
        say("Usage: search_file <search_term> [<file>]")
        return 0
    # 0.x tested `-n "$2"`, 1.x `$# -ge 2`: an empty second argument counts only in 1.x.
    has_file = (len(args) >= 2 and args[1] != "") if state.is_v0() else len(args) >= 2
    if has_file:
        if not os.path.isfile(args[1]):
            say("Usage: search_file <search_term> [<file>]")
            say("Error: File name {} not found. Please provide a valid file name.".format(args[1]))
            return 0
        path = args[1]
    else:
        path = str(state.Registry().get("CURRENT_FILE", "") or "")
        if not path:
            say("No file open. Use the open command first.")
            return 0
    path = os.path.realpath(path)
    matches = _lines(_run(["grep", "-nH", "--", term, path]))
    if not matches:
        say('No matches found for "{}" in {}'.format(term, path))
        return 0
    say('Found {} matches for "{}" in {}:'.format(len(matches), term, path))
    numbers = sorted({int(line.split(b":")[1]) for line in matches if len(line.split(b":")) > 1 and line.split(b":")[1].isdigit()})
    with open(path, "rb") as handle:
        content = handle.read().split(b"\n")
    _write_lines([b"Line %d:%s" % (number, content[number - 1] if number - 1 < len(content) else b"") for number in numbers])
    say('End of matches for "{}" in {}'.format(term, path))
    return 0
