"""Exception classes whose *class paths* travel over the wire (HTTP 511 `swerexception`).

Clients rebuild exceptions by importing `class_path` (swerex-protocol.md §5), so each class reports the
module name the reference server uses, not this file's name.
"""


class SwerexException(Exception):
    pass


SwerexException.__module__ = "swerex.exceptions"


def _swerex(name, *bases):
    cls = type(name, (SwerexException,) + bases, {})
    cls.__module__ = "swerex.exceptions"
    return cls


SessionExistsError = _swerex("SessionExistsError", ValueError)
SessionDoesNotExistError = _swerex("SessionDoesNotExistError", ValueError)
CommandTimeoutError = _swerex("CommandTimeoutError", RuntimeError, TimeoutError)
NonZeroExitCodeError = _swerex("NonZeroExitCodeError", RuntimeError)
NoExitCodeError = _swerex("NoExitCodeError", RuntimeError)
SessionNotInitializedError = _swerex("SessionNotInitializedError", RuntimeError)


class BashIncorrectSyntaxError(SwerexException, RuntimeError):
    def __init__(self, message, extra_info=None):
        super().__init__(message)
        self.extra_info = extra_info if extra_info is not None else {}


BashIncorrectSyntaxError.__module__ = "swerex.exceptions"


class TIMEOUT(Exception):
    """Stands in for `pexpect.exceptions.TIMEOUT`, which the reference raises from its pty wrapper."""


TIMEOUT.__module__ = "pexpect.exceptions"


class EOF(Exception):
    """Stands in for `pexpect.exceptions.EOF`: the session's shell exited."""


EOF.__module__ = "pexpect.exceptions"
EOF_MESSAGE = "End Of File (EOF). Exception style platform."
