"""What the endpoints do (SWE-ReX 1.4 `LocalRuntime`): session registry, /execute, file endpoints, /close."""

import os

from rex_errors import CommandTimeoutError, NonZeroExitCodeError, SessionDoesNotExistError, SessionExistsError
from rex_session import BashSession


class Runtime(object):
    def __init__(self):
        self.sessions = {}

    def create_session(self, request):
        if request.session in self.sessions:
            raise SessionExistsError("session {} already exists".format(request.session))
        session = BashSession(request)
        # Registered before the shell starts: a failed start keeps the name taken (reference behaviour).
        self.sessions[request.session] = session
        return session.start()

    def run_in_session(self, action, stall=None):
        if action.session not in self.sessions:
            raise SessionDoesNotExistError("session {!r} does not exist".format(action.session))
        return self.sessions[action.session].run(action, stall)

    def close_session(self, request):
        if request.session not in self.sessions:
            raise SessionDoesNotExistError("session {!r} does not exist".format(request.session))
        response = self.sessions[request.session].close()
        del self.sessions[request.session]
        return response

    def execute(self, command):
        import subprocess  # imported on first use to keep start-up short

        try:
            result = subprocess.run(
                command.command,
                shell=command.shell,
                timeout=command.timeout,
                env=command.env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if command.merge_output_streams else subprocess.PIPE,
                cwd=command.cwd,
            )
        except subprocess.TimeoutExpired:
            raise CommandTimeoutError("Timeout ({}s) exceeded while running command".format(command.timeout))
        stdout = result.stdout.decode(errors="backslashreplace")
        stderr = result.stderr.decode(errors="backslashreplace") if result.stderr is not None else ""
        if command.check and result.returncode != 0:
            message = "Command {!r} failed with exit code {}. Stdout:\n{!r}\nStderr:\n{!r}".format(
                command.command, result.returncode, stdout, stderr
            )
            if command.error_msg:
                message = "{}: {}".format(command.error_msg, message)
            raise NonZeroExitCodeError(message)
        return {"stdout": stdout, "stderr": stderr, "exit_code": result.returncode}

    def read_file(self, request):
        # Text mode = universal newlines, like Path.read_text.
        with open(request.path, encoding=request.encoding, errors=request.errors) as f:
            return {"content": f.read()}

    def write_file(self, request):
        parent = os.path.dirname(request.path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(request.path, "w") as f:
            f.write(request.content)
        return {}

    def upload(self, payload, target_path, unzip):
        import shutil
        import tempfile

        parent = os.path.dirname(target_path)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with tempfile.TemporaryDirectory() as temp_dir:
            file_path = os.path.join(temp_dir, "temp_file_transfer")
            with open(file_path, "wb") as f:
                f.write(payload)
            if unzip:
                import zipfile

                with zipfile.ZipFile(file_path, "r") as archive:
                    archive.extractall(target_path)
            else:
                shutil.move(file_path, target_path)
        return {}

    def close(self):
        for session in self.sessions.values():
            session.close()
        return {}
