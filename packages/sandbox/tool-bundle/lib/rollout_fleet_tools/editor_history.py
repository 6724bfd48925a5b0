"""Per-file edit history of str_replace_editor, persisted across invocations.

Upstream SWE-agent never persisted its history, so `undo_edit` always failed there; ours works.
State file: $ROLLOUT_FLEET_EDITOR_HISTORY, else ~/.rollout-fleet/editor-history.json (HOME=/root in sandboxes).
Format: {"version": 1, "files": {"<absolute path as printed>": ["<base64 of the exact pre-edit bytes>", ...]}}.
The exact bytes (not the tab-expanded text the edit wrote) are kept so an undo restores the file byte for byte.
A history failure never fails an edit: the observation must not change because of bookkeeping.
"""

import base64
import json
import os
from typing import Dict, List, Optional

# Bounds the state file; older entries of a file are dropped first.
MAX_ENTRIES_PER_FILE = 50


def history_path() -> str:
    override = os.environ.get("ROLLOUT_FLEET_EDITOR_HISTORY")
    if override:
        return override
    return os.path.join(os.path.expanduser("~"), ".rollout-fleet", "editor-history.json")


def _load() -> Dict[str, List[str]]:
    try:
        with open(history_path(), "r", encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return {}
    files = data.get("files") if isinstance(data, dict) else None
    if not isinstance(files, dict):
        return {}
    return {key: value for key, value in files.items() if isinstance(value, list)}


def _save(files: Dict[str, List[str]]) -> None:
    import tempfile  # imported on demand: views and failed edits never write history

    target = history_path()
    directory = os.path.dirname(target) or "."
    os.makedirs(directory, exist_ok=True)
    # Write-then-rename so a crash never leaves a truncated state file behind.
    fd, temporary = tempfile.mkstemp(prefix=".editor-history.", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump({"version": 1, "files": files}, handle)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def push(path: str, content: bytes) -> None:
    try:
        files = _load()
        entries = files.setdefault(path, [])
        entries.append(base64.b64encode(content).decode("ascii"))
        del entries[:-MAX_ENTRIES_PER_FILE]
        _save(files)
    except (OSError, ValueError):
        pass


def clear(path: str) -> None:
    try:
        files = _load()
        if path in files:
            del files[path]
            _save(files)
    except (OSError, ValueError):
        pass


def peek(path: str) -> Optional[bytes]:
    entries = _load().get(path)
    if not entries:
        return None
    try:
        return base64.b64decode(entries[-1])
    except (ValueError, TypeError):
        return None


def drop_last(path: str) -> None:
    try:
        files = _load()
        entries = files.get(path)
        if entries:
            entries.pop()
            if not entries:
                del files[path]
            _save(files)
    except (OSError, ValueError):
        pass
