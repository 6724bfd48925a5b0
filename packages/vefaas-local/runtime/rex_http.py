"""Minimal HTTP/1.1 server transport (keep-alive, Content-Length and chunked request bodies).

`http.server` would pull in http.client, email and ssl (~60 ms CPU and ~9 MB RSS per sandbox at start);
this keeps the per-sandbox server small. Requests on one connection are handled in order; every
connection gets its own thread (ThreadingMixIn), and the application decides what may run concurrently.
"""

import socketserver
import sys

_MAX_LINE = 65536
_MAX_HEADERS = 200
_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    404: "Not Found",
    405: "Method Not Allowed",
    422: "Unprocessable Entity",
    500: "Internal Server Error",
    511: "Network Authentication Required",
}


class Request(object):
    def __init__(self, method, path, headers, body):
        self.method, self.path, self.headers, self.body = method, path, headers, body


class _BadRequest(Exception):
    pass


class Handler(socketserver.StreamRequestHandler):
    app = None  # callable(Request) -> (status, [(name, value)], body bytes); set by serve()

    def handle(self):
        while True:
            try:
                request = self._read_request()
            except _BadRequest:
                self._write(400, [("content-type", "application/json"), ("connection", "close")], b'{"detail":"Bad Request"}', False)
                return
            except (ConnectionError, OSError):
                return
            if request is None:
                return
            status, headers, body = self.app(request)
            keep_alive = request.headers.get("connection", "").lower() != "close"
            try:
                self._write(status, headers, body if request.method != "HEAD" else b"", keep_alive, len(body))
            except (ConnectionError, OSError):
                return
            if not keep_alive:
                return

    def _readline(self):
        line = self.rfile.readline(_MAX_LINE + 1)
        if len(line) > _MAX_LINE:
            raise _BadRequest()
        return line

    def _read_request(self):
        line = self._readline()
        while line in (b"\r\n", b"\n"):  # tolerate stray CRLF between requests (RFC 9112 §2.2)
            line = self._readline()
        if not line:
            return None
        parts = line.decode("latin-1").split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise _BadRequest()
        method, target, version = parts
        headers = {}
        for _ in range(_MAX_HEADERS + 1):
            raw = self._readline()
            if raw in (b"\r\n", b"\n", b""):
                break
            name, sep, value = raw.decode("latin-1").partition(":")
            if not sep:
                raise _BadRequest()
            name = name.strip().lower()
            value = value.strip()
            headers[name] = headers[name] + ", " + value if name in headers else value
        else:
            raise _BadRequest()
        for name in ("x-api-key", "x-request-id"):
            if name in headers:  # these carry text; latin-1 decoding above would mangle UTF-8 values
                headers[name] = headers[name].encode("latin-1").decode("utf-8", "replace")
        if headers.get("expect", "").lower() == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        request = Request(method, target.split("?", 1)[0], headers, self._read_body(headers))
        if version == "HTTP/1.0" and headers.get("connection", "").lower() != "keep-alive":
            request.headers["connection"] = "close"
        return request

    def _read_body(self, headers):
        if "chunked" in headers.get("transfer-encoding", "").lower():
            chunks = []
            while True:
                size_line = self._readline()
                if not size_line:
                    raise ConnectionError("connection closed inside a chunked body")
                try:
                    size = int(size_line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise _BadRequest()
                if size == 0:
                    while self._readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self._readline()
        try:
            length = int(headers.get("content-length") or 0)
        except ValueError:
            raise _BadRequest()
        return self.rfile.read(length) if length > 0 else b""

    def _write(self, status, headers, body, keep_alive, length=None):
        lines = ["HTTP/1.1 {} {}".format(status, _REASONS.get(status, "Unknown"))]
        lines += ["{}: {}".format(name, value) for name, value in headers]
        lines.append("content-length: {}".format(len(body) if length is None else length))
        if not keep_alive:
            lines.append("connection: close")
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body)


class UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class TcpServer(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


def log(message):
    sys.stderr.write(message + "\n")
    sys.stderr.flush()
