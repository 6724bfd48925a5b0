"""Configuration and the state the tools keep between calls.

- The release line to reproduce: `ROLLOUT_FLEET_SWE_AGENT` = 0.1 | 0.3 | 0.6 | 0.6.1 | 0.7 | 1.0-dev | 1.0 | 1.1 | main
  (exported by the worker when it installs the bundle).
- State lives in a JSON object file, SWE-agent's "registry": `$SWE_AGENT_ENV_FILE`, else `$HOME/.swe-agent-env`
  (`/root/.swe-agent-env` in a sandbox). A lookup tries the file, then an environment variable of the same name,
  then the default — so `WINDOW`/`OVERLAP` exported in the session apply until a tool stores its own value.
  SWE-agent v0 kept the same keys in shell variables; a file is the only place an executable can keep them.
- Files SWE-agent keeps under /root (model.patch, test.patch) are under `$HOME` (which is /root in a sandbox).
"""

import json
import os
from pathlib import Path
from typing import Any, Dict, Optional

VERSION_VARIABLE = "ROLLOUT_FLEET_SWE_AGENT"
VERSIONS = ("0.1", "0.3", "0.6", "0.6.1", "0.7", "1.0-dev", "1.0", "1.1", "main")
RETRY_TOKEN = "###SWE-AGENT-RETRY-WITH-OUTPUT###"


def version() -> str:
    value = os.environ.get(VERSION_VARIABLE, "main")
    return value if value in VERSIONS else "main"


def is_v0() -> bool:
    return version().startswith("0.")


def home() -> Path:
    return Path(os.environ.get("HOME") or "/root")


class Registry:
    """SWE-agent's env registry: one JSON object, rewritten whole on every set."""

    def __init__(self) -> None:
        configured = os.environ.get("SWE_AGENT_ENV_FILE")
        self.path = Path(configured) if configured else home() / ".swe-agent-env"

    def _load(self) -> Dict[str, Any]:
        if not self.path.exists():
            self.path.write_text("{}")
        loaded = json.loads(self.path.read_text())
        return loaded if isinstance(loaded, dict) else {}

    def get(self, key: str, default: Any = None) -> Any:
        if key in os.environ:
            default = os.environ[key]
        return self._load().get(key, default)

    def get_if_none(self, value: Any, key: str, default: Any = None) -> Any:
        return value if value is not None else self.get(key, default)

    def set(self, key: str, value: Any) -> None:
        data = self._load()
        data[key] = value
        self.path.write_text(json.dumps(data))


def window_size(registry: Registry, override: Optional[int] = None) -> int:
    return int(override if override is not None else registry.get("WINDOW", 100))


def overlap_size(registry: Registry) -> int:
    return int(registry.get("OVERLAP", 0))
