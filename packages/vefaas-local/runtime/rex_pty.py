"""A bash process on a pseudo-terminal with pexpect-like `expect` (regex patterns, earliest match wins).

Only the standard library is used: `pty.fork` gives bash a controlling terminal (so Ctrl-C / Ctrl-Z in the
input become SIGINT / SIGTSTP for its foreground job) and the terminal starts with echo off, 24x80.
"""

import codecs
import errno
import fcntl
import os
import pty
import re
import select
import signal
import struct
import termios
import time

from rex_errors import EOF, EOF_MESSAGE, TIMEOUT

_READ_CHUNK = 65536
# Read everything that is already available (up to this much) before searching the buffer again, so huge
# outputs are not re-scanned after every 4 KiB pty read.
_READ_BATCH = 1 << 20


class PtyProcess(object):
    def __init__(self, argv, env, cwd=None):
        pid, fd = pty.fork()
        if pid == 0:  # child: only async-signal-safe-ish work, then exec
            try:
                if cwd:
                    os.chdir(cwd)
                attrs = termios.tcgetattr(0)
                attrs[3] &= ~termios.ECHO
                termios.tcsetattr(0, termios.TCSANOW, attrs)
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
                os.execve(argv[0], argv, env)
            except BaseException:
                os._exit(127)
        self.pid = pid
        self.fd = fd
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="backslashreplace")
        self.buffer = ""
        self.before = ""
        self.eof = False
        self.closed = False

    # -- output side ---------------------------------------------------------------------------------

    def _read_available(self, timeout):
        """Waits up to `timeout` (None = forever) for output; appends what arrived to the buffer."""
        if self.eof:
            return
        ready, _, _ = _select([self.fd], [], timeout)
        if not ready:
            return
        total = 0
        while total < _READ_BATCH:
            try:
                data = os.read(self.fd, _READ_CHUNK)
            except OSError as e:
                if e.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                    break
                if e.errno == errno.EIO:  # slave side closed: the shell exited
                    self._mark_eof()
                    break
                raise
            if not data:
                self._mark_eof()
                break
            total += len(data)
            self.buffer += self._decoder.decode(data)

    def _mark_eof(self):
        self.eof = True
        self.buffer += self._decoder.decode(b"", final=True)

    def expect(self, patterns, timeout):
        """Waits until one of `patterns` (regexes, DOTALL) matches the buffered output.

        Returns the index of the pattern whose match starts first (ties: lowest index); `self.before` is
        the text before the match and the buffer keeps only the text after it. Raises TIMEOUT (buffer kept)
        or EOF.
        """
        compiled = [re.compile(p, re.DOTALL) for p in patterns]
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            best = None
            for index, regex in enumerate(compiled):
                m = regex.search(self.buffer)
                if m is not None and (best is None or m.start() < best[1].start()):
                    best = (index, m)
            if best is not None:
                index, m = best
                self.before = self.buffer[: m.start()]
                self.buffer = self.buffer[m.end():]
                return index
            if self.eof:
                self.before = self.buffer
                self.buffer = ""
                raise EOF(EOF_MESSAGE)
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0:
                raise TIMEOUT(self._timeout_message(patterns))
            self._read_available(remaining)

    def _timeout_message(self, patterns):
        return "Timeout exceeded.\n<swerex-local bash session pid={}>\nsearcher: {!r}\nbuffer (last 100 chars): {!r}".format(
            self.pid, list(patterns), self.buffer[-100:]
        )

    def read_following(self, wait):
        """Sleeps `wait` seconds, then returns (and consumes) whatever output is available."""
        time.sleep(wait)
        self._read_available(0.1)
        out, self.buffer = self.buffer, ""
        return out

    # -- input side ----------------------------------------------------------------------------------

    def send(self, text):
        data = text.encode("utf-8", "backslashreplace")  # as pexpect with codec_errors="backslashreplace"
        while data:
            # Keep draining output while writing: a long command could otherwise fill both pty buffers.
            readable, writable, _ = _select([self.fd], [self.fd], None)
            if readable:
                self._read_available(0)
                if self.eof:
                    raise EOF(EOF_MESSAGE)
            if writable:
                try:
                    n = os.write(self.fd, data)
                except OSError as e:
                    if e.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
                        continue
                    if e.errno == errno.EIO:
                        self._mark_eof()
                        raise EOF(EOF_MESSAGE)
                    raise
                data = data[n:]

    def sendline(self, text):
        self.send(text + "\n")

    def sendcontrol(self, char):
        self.send(chr(ord(char.lower()) & 0x1F))

    def setecho(self, on):
        attrs = termios.tcgetattr(self.fd)
        if on:
            attrs[3] |= termios.ECHO
        else:
            attrs[3] &= ~termios.ECHO
        termios.tcsetattr(self.fd, termios.TCSANOW, attrs)

    # -- lifetime ------------------------------------------------------------------------------------

    def close(self):
        """Hangs up the terminal and makes sure the shell is gone (SIGKILL after a short grace)."""
        if self.closed:
            return
        self.closed = True
        try:
            os.close(self.fd)
        except OSError:
            pass
        for sig in (signal.SIGHUP, signal.SIGCONT, signal.SIGINT):
            _kill(self.pid, sig)
        deadline = time.monotonic() + 0.2
        while time.monotonic() < deadline:
            if _reaped(self.pid):
                return
            time.sleep(0.01)
        _kill(self.pid, signal.SIGKILL)
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:
            pass


def _select(r, w, timeout):
    while True:
        try:
            ready_r, ready_w, _ = select.select(r, w, [], timeout)
            return ready_r, ready_w, []
        except InterruptedError:
            continue


def _kill(pid, sig):
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass


def _reaped(pid):
    try:
        done, _ = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return True
    return done == pid
