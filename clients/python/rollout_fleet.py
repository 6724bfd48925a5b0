"""Python client of the rollout-fleet HTTP API (v1): submit runs, stream results and RL groups, drive sandbox sessions.

One module, standard library only (urllib), Python 3.9+. Copy it next to your trainer or put this directory on
``PYTHONPATH``.

    from rollout_fleet import Fleet

    fleet = Fleet("http://127.0.0.1:8788", token=None)
    fleet.submit("exp-42", episodes, samples=8)
    for group in fleet.groups("exp-42"):            # each RL group once, as soon as it is complete
        print(group.episode_id, group.rewards, group.reward_mean, group.reward_std)

    with fleet.agent_env(image="pyutils") as env:   # the seed's AgentEnv, served by the fleet
        env.start()
        env.install_tools([{"name": "execute_bash"}, {"name": "str_replace_editor"}])
        print(env.communicate("which str_replace_editor"))

Streams resume by themselves: a dropped connection is re-opened after the last cursor received, so every
result or group is yielded exactly once. Errors raise :class:`FleetError` carrying the API's stable ``code``.
"""

from __future__ import annotations

import http.client
import json
import time
import urllib.error
import urllib.parse
import urllib.request
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, Iterator, List, Mapping, Optional, Sequence, Union

__all__ = [
    "AgentEnv",
    "AnnounceSummary",
    "CommandResult",
    "CommandTimeoutError",
    "Fleet",
    "FleetError",
    "Group",
    "Problem",
    "Result",
    "RunStatus",
    "SubmitSummary",
]

DEFAULT_URL = "http://127.0.0.1:8788"
DEFAULT_TOOLS = ("execute_bash", "str_replace_editor")


# --------------------------------------------------------------------------------------------------- data types


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a submission: where (file, line or JSON path, field), what, and what to do."""

    file: str
    message: str
    hint: str
    code: str
    line: Optional[int] = None
    path: Optional[str] = None
    field: Optional[str] = None

    def __str__(self) -> str:
        where = self.file + (f":{self.line}" if self.line is not None else "") + (f":{self.path}" if self.path else "")
        return f"{where}: {self.field + ': ' if self.field else ''}{self.message} — {self.hint}"


class FleetError(Exception):
    """An error answer of the API (``code`` from the project's error table), or a transport failure (``status`` 0)."""

    def __init__(self, status: int, code: str, message: str, hint: str = "", retryable: bool = False,
                 problems: Sequence[Problem] = (), did_you_mean: Sequence[str] = ()) -> None:
        lines = [f"{code}: {message}"] + [f"  {p}" for p in problems]
        if did_you_mean:
            lines.append(f"  did you mean: {', '.join(did_you_mean)}?")
        super().__init__("\n".join(lines))
        self.status = status
        self.code = code
        self.message = message
        self.hint = hint
        self.retryable = retryable
        self.problems = list(problems)
        self.did_you_mean = list(did_you_mean)


class CommandTimeoutError(FleetError):
    """``AgentEnv.communicate`` ran past its timeout (the command was interrupted; the session stays usable)."""


@dataclass(frozen=True)
class SubmitSummary:
    run_id: str
    episodes: int
    enqueued: int
    skipped_done: int
    skipped_queued: int
    dry_run: bool
    # What the server allowed but you probably did not mean (also issued as RuntimeWarning by submit).
    warnings: List[str] = field(default_factory=list)


@dataclass(frozen=True)
class AnnounceSummary:
    run_id: str
    specs: int
    sandboxes: int
    live_workers: int = 0
    warm_pool_workers: int = 0
    warm_pool_max: int = 0
    # Set when nothing will be pre-warmed now (no worker running, or none with RF_WARM_POOL_MAX > 0); the
    # announcement is recorded all the same.
    warning: Optional[str] = None


@dataclass(frozen=True)
class RunStatus:
    run_id: str
    created_at: Optional[str]
    cancelled: bool
    total: int
    done: int
    completed: int
    failed: int
    resolved: int
    duplicates: int
    active: int
    retrying: int
    waiting: int
    resolved_rate: Optional[float]
    throughput_per_s: Optional[float]
    eta_s: Optional[float]
    groups_total: int
    groups_completed: int

    @property
    def finished(self) -> bool:
        return self.cancelled or self.done >= self.total


@dataclass(frozen=True)
class Result:
    """One episode result (``raw`` is the whole JSON object: steps, patch, report, timings, ...)."""

    run_id: str
    episode_id: str
    instance_id: str
    sample_index: int
    status: str
    resolved: Optional[bool]
    reward: Optional[float]
    patch: Optional[str]
    cursor: str
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], cursor: str) -> "Result":
        return cls(
            run_id=data["run_id"], episode_id=data["episode_id"], instance_id=data["instance_id"],
            sample_index=data["sample_index"], status=data["status"], resolved=data.get("resolved"),
            reward=data.get("reward"), patch=data.get("patch"), cursor=cursor, raw=dict(data),
        )


@dataclass(frozen=True)
class Group:
    """A completed RL group: every sample of one episode, with the rewards' mean and sample standard deviation."""

    run_id: str
    episode_id: str
    instance_id: str
    size: int
    rewards: List[Optional[float]]
    reward_mean: Optional[float]
    reward_std: Optional[float]
    results: List[Result]
    completed_at: str
    cursor: str
    raw: Dict[str, Any] = field(repr=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], cursor: str) -> "Group":
        return cls(
            run_id=data["run_id"], episode_id=data["episode_id"], instance_id=data["instance_id"], size=data["size"],
            rewards=[s["reward"] for s in data["samples"]], reward_mean=data.get("reward_mean"),
            reward_std=data.get("reward_std"), results=[Result.from_json(r, cursor) for r in data.get("results", [])],
            completed_at=data["completed_at"], cursor=cursor, raw=dict(data),
        )


@dataclass(frozen=True)
class CommandResult:
    """What one call in a session gave: the whole observation, exit code, timing, and an error observation if any."""

    output: str
    exit_code: Optional[int]
    duration_ms: float
    timed_out: bool
    command: Optional[str] = None
    error: Optional[Dict[str, str]] = None


# ------------------------------------------------------------------------------------------------------ client


class Fleet:
    """A rollout-fleet API server. ``token`` is its RF_API_TOKEN (None for a loopback server without one)."""

    def __init__(self, url: str = DEFAULT_URL, token: Optional[str] = None, timeout: float = 600.0,
                 stream_idle_timeout: float = 60.0, reconnect_delay: float = 1.0, max_reconnects: Optional[int] = None) -> None:
        self.url = url.rstrip("/")
        self.token = token
        #: Seconds one request may take (session creation waits for a sandbox; calls for their command).
        self.timeout = timeout
        #: A followed stream silent for this long (the server sends keep-alives) is taken as dropped and re-opened.
        self.stream_idle_timeout = stream_idle_timeout
        self.reconnect_delay = reconnect_delay
        #: Re-opens allowed per stream without progress in between (None: no limit).
        self.max_reconnects = max_reconnects

    # ------------------------------------------------------------------------------------------------ runs

    def submit(self, run_id: str, episodes: Optional[Sequence[Mapping[str, Any]]] = None, *,
               files: Union[None, Mapping[str, str], Sequence[Union[str, Path]]] = None,
               predictions: Union[None, Mapping[str, str], Sequence[Union[str, Path]]] = None,
               samples: int = 1, image: Optional[str] = None, image_template: Optional[str] = None,
               instance: Optional[str] = None, gold: bool = False, test_command: Optional[str] = None,
               format: Optional[str] = None, force: bool = False, resume: bool = False, dry_run: bool = False,
               policy: Union[None, Mapping[str, Any], str, Path] = None) -> SubmitSummary:
        """Validates and enqueues a run, like ``rollout-fleet submit``; idempotent (submitting again enqueues only
        what is missing). ``episodes`` are native records (dicts); ``files`` are paths or ``{name: content}`` in any
        format the CLI reads; ``policy`` is a policy block (dict) or a JSON/YAML file path, as ``submit --policy``:
        the model being trained chooses each action. Raises FleetError with ``problems`` (file, line, field) when
        anything is invalid — then nothing was enqueued. A cancelled run is refused (FleetError ``RUN_CANCELLED``)
        unless ``resume=True``, which runs its cancelled episodes again and keeps the finished ones."""
        body: Dict[str, Any] = {"run_id": run_id, "samples": samples, "gold": gold, "force": force, "resume": resume,
                                "dry_run": dry_run}
        if episodes is not None:
            body["episodes"] = [dict(e) for e in episodes]
        if files is not None:
            body["files"] = _files(files)
        if predictions is not None:
            body["predictions"] = _files(predictions)
        if policy is not None:
            body["policy"] = dict(policy) if isinstance(policy, Mapping) else _files([policy])[0]
        for name, value in (("image", image), ("image_template", image_template), ("instance", instance),
                            ("test_command", test_command), ("format", format)):
            if value is not None:
                body[name] = value
        data = self._json("POST", "/v1/runs", body)
        summary = SubmitSummary(**{k: data[k] for k in SubmitSummary.__dataclass_fields__ if k in data})
        for message in summary.warnings:
            warnings.warn(message, RuntimeWarning, stacklevel=2)
        return summary

    def announce(self, run_id: str, episodes: Optional[Sequence[Mapping[str, Any]]] = None, *,
                 files: Union[None, Mapping[str, str], Sequence[Union[str, Path]]] = None,
                 samples: int = 1, image: Optional[str] = None, image_template: Optional[str] = None,
                 ttl_s: int = 3600) -> AnnounceSummary:
        """Announces the sandboxes a run will need, like ``rollout-fleet submit --announce``: validated as
        ``submit`` validates, nothing enqueued; the fleet's warm pools get sandboxes of those images ready ahead of
        time. A trainer announces batch N+1 while it trains on batch N; ``submit`` of the run later enqueues it and
        retires the announcement (which otherwise lapses after ``ttl_s``). When no live worker keeps a warm pool (none
        running, or all with ``RF_WARM_POOL_MAX=0``) nothing will be pre-warmed: the summary's ``warning`` says so, and
        so does a ``RuntimeWarning``."""
        body: Dict[str, Any] = {"run_id": run_id, "samples": samples, "announce": True, "announce_ttl_s": ttl_s}
        if episodes is not None:
            body["episodes"] = [dict(e) for e in episodes]
        if files is not None:
            body["files"] = _files(files)
        for name, value in (("image", image), ("image_template", image_template)):
            if value is not None:
                body[name] = value
        data = self._json("POST", "/v1/runs", body)
        announced = data["announced"]
        if announced.get("warning"):
            warnings.warn(f"announce: {announced['warning']}", RuntimeWarning, stacklevel=2)
        return AnnounceSummary(run_id=data["run_id"], specs=announced["specs"], sandboxes=announced["sandboxes"],
                               live_workers=announced.get("live_workers", 0),
                               warm_pool_workers=announced.get("warm_pool_workers", 0),
                               warm_pool_max=announced.get("warm_pool_max", 0), warning=announced.get("warning"))

    def status(self, run_id: str) -> RunStatus:
        data = self._json("GET", f"/v1/runs/{_quote(run_id)}")
        data["groups_total"], data["groups_completed"] = data["groups"]["total"], data["groups"]["completed"]
        return RunStatus(**{k: data[k] for k in RunStatus.__dataclass_fields__})

    def cancel(self, run_id: str) -> Dict[str, Any]:
        return self._json("POST", f"/v1/runs/{_quote(run_id)}/cancel")

    def retry(self, run_id: str) -> Dict[str, Any]:
        """Runs the failed episodes of a run again."""
        return self._json("POST", f"/v1/runs/{_quote(run_id)}/retry")

    def results(self, run_id: str, follow: bool = True, after: Optional[str] = None) -> Iterator[Result]:
        """Results in completion order, each once; with ``follow`` until the run is finished or cancelled. Resumes
        after the last cursor whenever the connection drops. Keep ``result.cursor`` to continue in a later call."""
        for cursor, item in self._stream(f"/v1/runs/{_quote(run_id)}/results", "result", follow, after):
            yield Result.from_json(item, cursor)

    def groups(self, run_id: str, follow: bool = True, after: Optional[str] = None) -> Iterator[Group]:
        """Completed RL groups (every sample of one episode), each once, as soon as complete; resumes like results."""
        for cursor, item in self._stream(f"/v1/runs/{_quote(run_id)}/groups", "group", follow, after):
            yield Group.from_json(item, cursor)

    # -------------------------------------------------------------------------------------------- sessions

    def agent_env(self, image: Optional[str] = None, **options: Any) -> "AgentEnv":
        """An AgentEnv on this fleet (not started yet; see :class:`AgentEnv`)."""
        return AgentEnv(self, image=image, **options)

    # ----------------------------------------------------------------------------------------------- transport

    def _request(self, method: str, path: str, body: Any = None, headers: Optional[Mapping[str, str]] = None,
                 timeout: Optional[float] = None) -> http.client.HTTPResponse:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        if self.token:
            request.add_header("Authorization", f"Bearer {self.token}")
        for name, value in (headers or {}).items():
            request.add_header(name, value)
        try:
            return urllib.request.urlopen(request, timeout=self.timeout if timeout is None else timeout)  # noqa: S310
        except urllib.error.HTTPError as err:
            raise _error_of(err) from None
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise FleetError(0, "NETWORK", f"cannot reach {self.url}: {reason}", retryable=True) from err

    def _json(self, method: str, path: str, body: Any = None) -> Any:
        with self._request(method, path, body) as response:
            text = response.read().decode("utf-8")
        return json.loads(text) if text else None

    def _stream(self, path: str, kind: str, follow: bool, after: Optional[str]) -> Iterator[tuple]:
        cursor = after
        failures = 0
        while True:
            query = {"follow": "true" if follow else "false"}
            if cursor:
                query["after"] = cursor
            try:
                response = self._request("GET", f"{path}?{urllib.parse.urlencode(query)}",
                                         headers={"Accept": "application/x-ndjson"}, timeout=self.stream_idle_timeout)
            except FleetError as err:
                if not err.retryable:
                    raise
                failures = self._pause(failures, err)
                continue
            ended = False
            try:
                with response:
                    for raw in response:
                        line = raw.strip()
                        if not line:
                            continue  # keep-alive
                        message = json.loads(line)
                        if "end" in message:
                            ended = True
                            break
                        cursor = message["cursor"]
                        failures = 0
                        yield cursor, message[kind]
            except (OSError, http.client.HTTPException, ValueError) as err:
                # Dropped mid-stream (reset, timeout, cut-off line): open it again after the last cursor.
                failures = self._pause(failures, err)
                continue
            if ended:
                return
            failures = self._pause(failures, FleetError(0, "NETWORK", "the stream ended without its end line", retryable=True))

    def _pause(self, failures: int, err: BaseException) -> int:
        failures += 1
        if self.max_reconnects is not None and failures > self.max_reconnects:
            if isinstance(err, FleetError):
                raise err
            raise FleetError(0, "NETWORK", f"stream dropped {failures} times in a row: {err}", retryable=True) from err
        time.sleep(min(30.0, self.reconnect_delay * (2 ** min(failures - 1, 5))))
        return failures


class AgentEnv:
    """The seed's AgentEnv (start, install_tools, communicate, close), served by the fleet: ``start()`` leases a
    sandbox from the fleet's sandbox supply (fleet-wide caps, create rate, reaper) as a remote session.

    Usable as a context manager (closes the session on exit). Options are the API's session fields:
    ``env``, ``lifetime_s``, ``idle_timeout_s``, ``startup_timeout_s``, ``step_timeout_s``, ``cpu_milli``,
    ``memory_mb``, ``wait_s``, ``label``, and ``tools`` to have tools installed at start.
    """

    def __init__(self, fleet: Fleet, image: Optional[str] = None, tools: Sequence[Any] = (), **options: Any) -> None:
        self.fleet = fleet
        self.image = image
        self._start_tools = _tool_names(tools)
        self.options = options
        self.session_id: Optional[str] = None
        self.sandbox_id: Optional[str] = None

    def start(self) -> "AgentEnv":
        if self.session_id is not None:
            raise RuntimeError("AgentEnv.start() called twice")
        body: Dict[str, Any] = {"tools": self._start_tools, **self.options}
        if self.image is not None:
            body["image"] = self.image
        session = self.fleet._json("POST", "/v1/sessions", body)
        self.session_id = session["id"]
        self.sandbox_id = session["sandbox_id"]
        return self

    def install_tools(self, tools: Sequence[Any]) -> None:
        """Installs tools given by name or as ``{"name": ...}`` configs (the seed's form)."""
        self.fleet._json("POST", f"{self._path()}/tools", {"tools": _tool_names(tools)})

    def communicate(self, command: str, timeout: Optional[float] = None) -> str:
        """Runs a command in the session and returns its output; raises CommandTimeoutError on a timeout."""
        result = self.run(command, timeout=timeout)
        if result.timed_out:
            raise CommandTimeoutError(200, "SWEREX_COMMAND_TIMEOUT", result.output)
        return result.output

    def run(self, command: str, timeout: Optional[float] = None) -> CommandResult:
        """Runs a command; a timeout, a syntax error are observations (``timed_out``, ``error``), not exceptions."""
        return self._run({"command": command}, timeout)

    def call_tool(self, name: str, arguments: Union[Mapping[str, Any], str], timeout: Optional[float] = None) -> CommandResult:
        """Runs a tool call as a model makes it (arguments as a dict or the model's JSON string)."""
        args: Any = arguments if isinstance(arguments, str) else dict(arguments)
        return self._run({"tool_call": {"name": name, "arguments": args}}, timeout)

    def read_file(self, path: str) -> str:
        return self.fleet._json("GET", f"{self._path()}/files?{urllib.parse.urlencode({'path': path})}")["content"]

    def write_file(self, path: str, content: str) -> None:
        self.fleet._json("PUT", f"{self._path()}/files", {"path": path, "content": content})

    def close(self) -> None:
        """Ends the session (its sandbox is killed). Idempotent; a session that already ended is fine."""
        if self.session_id is None:
            return
        try:
            self.fleet._json("DELETE", self._path())
        except FleetError as err:
            if err.code not in ("SESSION_CLOSED", "SESSION_NOT_FOUND"):
                raise
        finally:
            self.session_id = None

    def __enter__(self) -> "AgentEnv":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _run(self, body: Dict[str, Any], timeout: Optional[float]) -> CommandResult:
        if timeout is not None:
            body["timeout_s"] = timeout
        data = self.fleet._json("POST", f"{self._path()}/run", body)
        return CommandResult(**{k: data.get(k) for k in CommandResult.__dataclass_fields__})

    def _path(self) -> str:
        if self.session_id is None:
            raise RuntimeError("AgentEnv used before start() or after close()")
        return f"/v1/sessions/{_quote(self.session_id)}"


# ----------------------------------------------------------------------------------------------------- helpers


def _quote(segment: str) -> str:
    return urllib.parse.quote(segment, safe="")


def _tool_names(tools: Sequence[Any]) -> List[str]:
    return [t["name"] if isinstance(t, Mapping) else getattr(t, "name", t) for t in tools]


def _files(files: Union[Mapping[str, str], Sequence[Union[str, Path]]]) -> List[Dict[str, str]]:
    if isinstance(files, Mapping):
        return [{"name": name, "content": content} for name, content in files.items()]
    return [{"name": Path(p).name, "content": Path(p).read_text(encoding="utf-8")} for p in files]


def _error_of(err: urllib.error.HTTPError) -> FleetError:
    try:
        body = json.loads(err.read().decode("utf-8"))["error"]
    except (ValueError, KeyError, TypeError):
        return FleetError(err.code, "HTTP_ERROR", f"HTTP {err.code} {err.reason}", retryable=err.code >= 500)
    problems = [Problem(**{k: p.get(k) for k in Problem.__dataclass_fields__}) for p in body.get("problems", [])]
    return FleetError(err.code, body["code"], body["message"], body.get("hint", ""), body.get("retryable", False),
                      problems, body.get("did_you_mean", []))
