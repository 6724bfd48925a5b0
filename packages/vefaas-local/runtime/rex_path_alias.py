"""Path aliases for a server run WITHOUT isolation (vefaas-local isolation 'none').

A jailed sandbox sees its repository at /testbed, its home at /root and a private /tmp; without a mount
namespace those are directories somewhere on the host (and /tmp would be shared by every sandbox). `--path-alias /testbed=<dir>` makes the server translate at its
edge: alias -> real path in request bodies (commands, file paths, file contents), real path -> alias in
reply bodies, so callers see the same paths as in a jailed sandbox. It is a textual rewrite at path
boundaries ("/testbed", "/testbed/x", not "/testbedx" or "/a/testbed"): meant for trusted examples run
where bubblewrap cannot, never as isolation.
"""

import re


class PathAliases(object):
    def __init__(self, pairs):
        """pairs: [(alias, real)], e.g. [("/testbed", "/tmp/vefaas-local-x/sb-1/testbed")]."""
        self._real_of = dict(pairs)
        # One pass over the text: a real path produced for one alias (often under /tmp) must not be
        # rewritten again by another alias (/tmp).
        names = sorted(self._real_of, key=len, reverse=True)
        self._pattern = (
            re.compile(r"(?<![\w.\-/])(" + "|".join(re.escape(name) for name in names) + r")(?![\w.\-])") if names else None
        )
        # Longest real path first, so a real path nested in another maps to its own alias.
        self._to_alias = sorted(((real, alias) for alias, real in pairs), key=lambda pair: -len(pair[0]))

    def __bool__(self):
        return self._pattern is not None

    def to_real(self, text):
        if self._pattern is None:
            return text
        return self._pattern.sub(lambda match: self._real_of[match.group(1)], text)

    def to_alias(self, text):
        if not self._to_alias:
            return text
        # One pass too, longest real path first (the sandbox's /testbed lives under the host's /tmp).
        pattern = re.compile("|".join(re.escape(real) for real, _alias in self._to_alias))
        alias_of = dict(self._to_alias)
        return pattern.sub(lambda match: alias_of[match.group(0)], text)

    def request_bytes(self, body):
        return self.to_real(body.decode("utf-8")).encode("utf-8") if body else body

    def reply_bytes(self, body):
        return self.to_alias(body.decode("utf-8")).encode("utf-8") if body else body


def parse_alias(spec):
    """`ALIAS=REAL` -> (alias, real); both absolute paths."""
    alias, eq, real = spec.partition("=")
    if not eq or not alias.startswith("/") or not real.startswith("/"):
        raise ValueError("--path-alias expects /alias=/real/path, got {!r}".format(spec))
    return alias.rstrip("/") or "/", real.rstrip("/") or "/"
