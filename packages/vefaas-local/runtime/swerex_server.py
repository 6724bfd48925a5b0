#!/usr/bin/env python3
"""SWE-ReX 1.4 compatible server (standard library only, Python 3.8+) for vefaas-local sandboxes.

Wire contract: the SWE-ReX 1.4 HTTP API (mirrors `swerex-remote` 1.4.0; checked by the conformance suite in
packages/test-kit/src/swerex-conformance/).
  in:  HTTP/1.1 on a UNIX socket (--socket PATH, or --socket-fd N: a listening socket bound outside the jail and
       inherited, so no host directory needs to be writable inside) or TCP (--host/--port); JSON bodies; /upload
       multipart.
  auth: X-API-Key on every path when the token is non-empty; the token comes from --auth-token, or from
        --auth-token-fd N (read to EOF at start, the fd closed, the process made non-dumpable: no argv, environment
        or memory of this process that a sandbox process could read holds it) -> 401 {"detail":"Invalid API Key"} /
        401 {"detail":"Not authenticated"} + `www-authenticate: APIKey` when missing.
  idempotency: X-Request-ID single slot; only 200/404/405/422 responses are stored and replayed.
  out: 200 model bodies (every field), 404/405 {"detail":...}, 422 {"detail":[pydantic-v2 errors]},
       511 {"swerexception":{message,class_path,traceback,extra_info}} for runtime errors.
Concurrency: like the reference, one request executes at a time (a global lock), EXCEPT `GET /is_alive`,
which is answered immediately even while a command runs, so health probes through the gateway never
stall behind a long command.
"""

import json
import os
import signal
import sys
import threading

sys.dont_write_bytecode = True

import rex_models as models  # noqa: E402
from rex_http import Handler, TcpServer, UnixServer, log  # noqa: E402
from rex_multipart import boundary_of, parse_multipart  # noqa: E402
from rex_path_alias import PathAliases, parse_alias  # noqa: E402
from rex_runtime import Runtime  # noqa: E402
import rex_stall  # noqa: E402

VERSION = "1.4.0"
_STORED_STATUSES = (200, 404, 405, 422)


def _json_bytes(obj):
    return json.dumps(obj, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8")


class Response(object):
    def __init__(self, status, body, headers=None):
        self.status = status
        self.body = _json_bytes(body)
        self.headers = [("content-type", "application/json")] + list(headers or [])


class _Validation(Exception):
    def __init__(self, errors):
        super().__init__("validation failed")
        self.errors = errors


def _parse_json_body(body):
    if not body:
        raise _Validation([{"type": "missing", "loc": ["body"], "msg": "Field required", "input": None}])
    try:
        return json.loads(body.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise _Validation([{"type": "json_invalid", "loc": ["body", e.start], "msg": "JSON decode error", "input": {}, "ctx": {"error": str(e)}}])
    except ValueError as e:
        pos = getattr(e, "pos", 0)
        raise _Validation([{"type": "json_invalid", "loc": ["body", pos], "msg": "JSON decode error", "input": {}, "ctx": {"error": getattr(e, "msg", str(e))}}])


class App(object):
    def __init__(self, auth_token, aliases=None):
        self.auth_token = auth_token
        self.aliases = aliases or PathAliases([])
        self.runtime = Runtime()
        self.lock = threading.Lock()  # one request executes at a time (reference behaviour)
        self._slot_lock = threading.Lock()
        self._slot = (None, None)  # (request id, Response)
        self.routes = {
            "/": ("GET", lambda req: {"message": "hello world"}),
            "/is_alive": ("GET", lambda req: {"is_alive": True, "message": ""}),
            "/create_session": ("POST", self._create_session),
            "/run_in_session": ("POST", self._run_in_session),
            "/close_session": ("POST", self._close_session),
            "/execute": ("POST", self._execute),
            "/read_file": ("POST", self._read_file),
            "/write_file": ("POST", self._write_file),
            "/upload": ("POST", self._upload),
            "/close": ("POST", lambda req: self.runtime.close()),
        }

    # -- layers: auth -> request id -> routing/validation -> runtime ----------------------------------

    def __call__(self, req):
        # Without isolation, /testbed and /root are aliases of host directories: translated at this edge
        # (multipart bodies carry raw file bytes; their target_path is translated in _upload instead).
        if self.aliases and req.path != "/upload":
            req.body = self.aliases.request_bytes(req.body)
        try:
            response = self.handle(req)
        except Exception as e:
            log("internal error: {!r}".format(e))
            response = Response(500, {"detail": "Internal Server Error"})
        body = self.aliases.reply_bytes(response.body) if self.aliases else response.body
        return response.status, response.headers, body

    def handle(self, req):
        denied = self._authenticate(req)
        if denied is not None:
            return denied
        if req.path == "/is_alive":
            return self._with_request_id(req)
        with self.lock:
            return self._with_request_id(req)

    def _authenticate(self, req):
        if not self.auth_token:
            return None
        key = req.headers.get("x-api-key")
        if key is None:
            return Response(401, {"detail": "Not authenticated"}, [("www-authenticate", "APIKey")])
        if key != self.auth_token:
            return Response(401, {"detail": "Invalid API Key"})
        return None

    def _with_request_id(self, req):
        request_id = req.headers.get("x-request-id")
        if request_id:
            with self._slot_lock:
                stored_id, stored = self._slot
            if stored_id == request_id:
                return stored
        response = self._route(req)
        if request_id and response.status in _STORED_STATUSES:
            with self._slot_lock:
                self._slot = (request_id, response)
        return response

    def _route(self, req):
        route = self.routes.get(req.path)
        if route is None:
            return Response(404, {"detail": "Not Found"})
        method, endpoint = route
        allowed = (method, "HEAD") if method == "GET" else (method,)
        if req.method not in allowed:
            return Response(405, {"detail": "Method Not Allowed"}, [("allow", ", ".join(allowed))])
        try:
            return Response(200, endpoint(req))
        except _Validation as e:
            return Response(422, {"detail": e.errors})
        except Exception as e:  # runtime error -> 511, never stored for replay
            import traceback

            extra_info = getattr(e, "extra_info", None)
            body = {
                "swerexception": {
                    "message": str(e),
                    "class_path": type(e).__module__ + "." + type(e).__name__,
                    "traceback": traceback.format_exc(),
                    "extra_info": extra_info if isinstance(extra_info, dict) else {},
                }
            }
            return Response(511, body)

    # -- endpoints ------------------------------------------------------------------------------------

    @staticmethod
    def _union(req, union):
        model, errors = models.validate_union(union, _parse_json_body(req.body), ["body"])
        if errors:
            raise _Validation(errors)
        return model

    @staticmethod
    def _model(req, fields):
        model, errors = models.validate_model(fields, _parse_json_body(req.body), ["body"])
        if errors:
            raise _Validation(errors)
        return model

    def _create_session(self, req):
        return self.runtime.create_session(self._union(req, models.CREATE_SESSION_UNION))

    def _run_in_session(self, req):
        stall = rex_stall.parse(req.headers.get(rex_stall.HEADER))
        return self.runtime.run_in_session(self._union(req, models.ACTION_UNION), stall)

    def _close_session(self, req):
        return self.runtime.close_session(self._union(req, models.CLOSE_SESSION_UNION))

    def _execute(self, req):
        return self.runtime.execute(self._model(req, models.COMMAND_MODEL))

    def _read_file(self, req):
        return self.runtime.read_file(self._model(req, models.READ_FILE))

    def _write_file(self, req):
        return self.runtime.write_file(self._model(req, models.WRITE_FILE))

    def _upload(self, req):
        boundary = boundary_of(req.headers.get("content-type"))
        parts = []
        if boundary is not None:
            try:
                parts = parse_multipart(req.body, boundary)
            except ValueError as e:
                raise _Validation([{"type": "value_error", "loc": ["body"], "msg": "Value error, " + str(e), "input": None, "ctx": {"error": {}}}])
        fields = {}
        for part in parts:
            if part.name is not None and part.name not in fields:
                fields[part.name] = part
        errors = []
        file_part = fields.get("file")
        if file_part is None:
            errors.append({"type": "missing", "loc": ["body", "file"], "msg": "Field required", "input": None})
        elif file_part.filename is None:
            text = file_part.data.decode("utf-8", "replace")
            errors.append({"type": "value_error", "loc": ["body", "file"], "msg": "Value error, Expected UploadFile, received: <class 'str'>", "input": text, "ctx": {"error": {}}})
        target_part = fields.get("target_path")
        target_path = None
        if target_part is None:
            errors.append({"type": "missing", "loc": ["body", "target_path"], "msg": "Field required", "input": None})
        else:
            target_path = target_part.data.decode("utf-8", "replace")
        unzip = False
        if "unzip" in fields:
            unzip = models.BOOL(fields["unzip"].data.decode("utf-8", "replace"), ["body", "unzip"], errors)
        if errors:
            raise _Validation(errors)
        if self.aliases:
            target_path = self.aliases.to_real(target_path)
        return self.runtime.upload(file_part.data, target_path, unzip)


def _die_with_parent():
    """PR_SET_PDEATHSIG for runs without bubblewrap (which does this itself with --die-with-parent)."""
    import ctypes

    parent = os.getppid()
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before the call
        os._exit(1)


USAGE = "usage: swerex_server.py (--socket PATH | --socket-fd N | [--host HOST] [--port PORT]) (--auth-token TOKEN | --auth-token-fd N) [--cwd DIR] [--die-with-parent] [--path-alias /ALIAS=/REAL ...] | --version"


def _read_token_fd(fd):
    """The token from an inherited pipe; stdin (if that was it) then reads /dev/null, and nobody can read us."""
    chunks = []
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        chunks.append(chunk)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE 0: /proc/<pid>/mem, environ closed
    return b"".join(chunks).decode("utf-8").strip()


def _parse_args(argv):
    """argparse costs ~15 ms of start-up per sandbox; the option set is tiny."""
    opts = {"host": "0.0.0.0", "port": 8000, "socket": None, "socket_fd": None, "auth_token": None, "auth_token_fd": None, "cwd": None, "die_with_parent": False, "path_alias": []}
    i = 0
    while i < len(argv):
        arg = argv[i]
        name, eq, inline = arg.partition("=")
        key = name[2:].replace("-", "_") if name.startswith("--") else None
        if key == "die_with_parent" and not eq:
            opts[key] = True
        elif key in ("host", "port", "socket", "socket_fd", "auth_token", "auth_token_fd", "cwd", "path_alias"):
            if not eq:
                i += 1
                if i >= len(argv):
                    raise SystemExit("{}\nerror: {} expects a value".format(USAGE, name))
                inline = argv[i]
            if key == "path_alias":
                try:
                    opts[key].append(parse_alias(inline))
                except ValueError as e:
                    raise SystemExit("{}\nerror: {}".format(USAGE, e))
            else:
                opts[key] = int(inline) if key in ("port", "socket_fd", "auth_token_fd") else inline
        else:
            raise SystemExit("{}\nerror: unrecognized argument {}".format(USAGE, arg))
        i += 1
    if opts["auth_token"] is None and opts["auth_token_fd"] is None:
        raise SystemExit("{}\nerror: the following arguments are required: --auth-token".format(USAGE))
    return opts


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if "-v" in argv or "--version" in argv:
        if len(argv) > 1:
            print("Error: --version cannot be combined with other arguments")
            return 1
        print(VERSION)
        return 0
    opts = _parse_args(argv)
    if opts["cwd"]:
        os.chdir(opts["cwd"])
    if opts["die_with_parent"]:
        _die_with_parent()

    token = opts["auth_token"] if opts["auth_token_fd"] is None else _read_token_fd(opts["auth_token_fd"])
    app = App(token, PathAliases(opts["path_alias"]))
    Handler.app = app
    if opts["socket_fd"] is not None:
        import socket

        server = UnixServer("", Handler, bind_and_activate=False)
        server.socket.close()
        server.socket = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM, fileno=opts["socket_fd"])
        where = "fd {}".format(opts["socket_fd"])
    elif opts["socket"]:
        if os.path.exists(opts["socket"]):
            os.unlink(opts["socket"])
        server = UnixServer(opts["socket"], Handler)
        os.chmod(opts["socket"], 0o660)
        where = opts["socket"]
    else:
        server = TcpServer((opts["host"], opts["port"]), Handler)
        where = "{}:{}".format(opts["host"], opts["port"])

    def stop(_signum, _frame):
        for session in list(app.runtime.sessions.values()):
            shell = session._shell
            if shell is not None:
                try:
                    os.kill(shell.pid, signal.SIGHUP)
                except OSError:
                    pass
        os._exit(0)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    log("swerex-local {} listening on {}".format(VERSION, where))
    server.serve_forever(poll_interval=3600)
    return 0


if __name__ == "__main__":
    sys.exit(main())
