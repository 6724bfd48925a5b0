"""Entry point of every windowed tool executable: `run(<tool>)` from bin/<tool>."""

import sys
from typing import Callable, Dict, List

from . import edit_tools, navigate, search, submit

TOOLS = {
    "open": navigate.open_tool,
    "goto": navigate.goto_tool,
    "scroll_up": navigate.scroll_up_tool,
    "scroll_down": navigate.scroll_down_tool,
    "create": navigate.create_tool,
    "edit_linting": lambda argv: edit_tools.edit_tool(argv, "linting"),
    "edit_replace": lambda argv: edit_tools.edit_tool(argv, "replace"),
    "insert": edit_tools.insert_tool,
    "find_file": search.find_file,
    "search_dir": search.search_dir,
    "search_file": search.search_file,
    "submit": submit.submit,
}  # type: Dict[str, Callable[[List[str]], int]]


def run(tool: str) -> None:
    sys.exit(TOOLS[tool](sys.argv[1:]))
