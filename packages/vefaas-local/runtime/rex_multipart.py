"""A small multipart/form-data parser (RFC 7578) for /upload; the stdlib `cgi` module is deprecated."""

import re

_PARAM = re.compile(r';\s*([A-Za-z0-9_*-]+)=("(?:[^"\\]|\\.)*"|[^;]*)')


def _params(header_value):
    out = {}
    for name, value in _PARAM.findall(";" + header_value.split(";", 1)[1] if ";" in header_value else ""):
        value = value.strip()
        if value.startswith('"') and value.endswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        out[name.lower()] = value
    return out


class Part(object):
    def __init__(self, name, filename, content_type, data):
        self.name, self.filename, self.content_type, self.data = name, filename, content_type, data


def boundary_of(content_type):
    if not content_type or content_type.split(";", 1)[0].strip().lower() != "multipart/form-data":
        return None
    return _params(content_type).get("boundary") or None


def parse_multipart(body, boundary):
    """Returns the parts (in order). Raises ValueError on malformed input."""
    delimiter = b"--" + boundary.encode("latin-1")
    start = body.find(delimiter)
    if start < 0:
        raise ValueError("multipart boundary not found")
    parts = []
    pos = start + len(delimiter)
    while True:
        if body.startswith(b"--", pos):
            return parts  # closing delimiter
        if body.startswith(b"\r\n", pos):
            pos += 2
        header_end = body.find(b"\r\n\r\n", pos)
        if header_end < 0:
            raise ValueError("multipart part without header end")
        headers = {}
        for line in body[pos:header_end].split(b"\r\n"):
            if b":" in line:
                key, value = line.split(b":", 1)
                headers[key.strip().lower().decode("latin-1")] = value.strip().decode("utf-8", "replace")
        data_start = header_end + 4
        next_delim = body.find(b"\r\n" + delimiter, data_start)
        if next_delim < 0:
            raise ValueError("multipart part not terminated")
        disposition = _params(headers.get("content-disposition", ""))
        parts.append(Part(disposition.get("name"), disposition.get("filename"), headers.get("content-type"), body[data_start:next_delim]))
        pos = next_delim + 2 + len(delimiter)
