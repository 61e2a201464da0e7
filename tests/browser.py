"""Headless Chromium driven over the DevTools protocol through a pipe (--remote-debugging-pipe:
JSON messages ending in a NUL byte, read from its fd 3 and written to its fd 4), so a page
test can type into a field and read the page back with no package beyond the browser."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from contextlib import ExitStack, contextmanager


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@contextmanager
def browser_env():
    """The environment for a Chromium: its temporary files (a singleton socket's folder,
    left behind when it is killed) go into a folder of its own, removed afterwards. The
    folder's path is short, since a socket's path holds at most 107 bytes."""
    folder = tempfile.mkdtemp(prefix="chromium-")
    try:
        yield {**os.environ, "TMPDIR": folder}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class Browser:
    def __init__(self, profile: str):
        to_browser, self._write = os.pipe()
        self._read, from_browser = os.pipe()
        flags = "--headless --no-sandbox --disable-gpu --remote-debugging-pipe"
        command = f'exec "$0" {flags} --user-data-dir="$1" 3<&{to_browser} 4>&{from_browser}'
        self._cleanup = ExitStack()
        self.proc = subprocess.Popen(
            ["bash", "-c", command, chromium(), profile],
            pass_fds=(to_browser, from_browser),
            env=self._cleanup.enter_context(browser_env()),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_browser)
        os.close(from_browser)
        self._buffer, self._id, self.session = b"", 0, None

    def send(self, method: str, timeout: float = 30, **params) -> dict:
        """One command (to the attached page once there is one); its result."""
        self._id += 1
        message = {"id": self._id, "method": method, "params": params}
        if self.session is not None and not method.startswith("Target."):
            message["sessionId"] = self.session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            while b"\0" not in self._buffer:
                chunk = os.read(self._read, 1 << 16)
                assert chunk, "chromium closed its pipe"
                self._buffer += chunk
            raw, self._buffer = self._buffer.split(b"\0", 1)
            answer = json.loads(raw)
            if answer.get("id") == self._id:
                assert "error" not in answer, answer
                return answer["result"]
        raise AssertionError(f"no answer to {method} in {timeout} s")

    def open(self, url: str) -> None:
        target = self.send("Target.createTarget", url=url)["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]

    def run(self, script: str):
        """The value of a JavaScript expression in the page."""
        result = self.send("Runtime.evaluate", expression=script, returnByValue=True)
        return result["result"].get("value")

    def wait_for(self, script: str, timeout: float = 30):
        """Poll the expression until it is truthy; its value."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.run(script)
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"never true in {timeout} s: {script}")

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)
        self._cleanup.close()
        os.close(self._write)
        os.close(self._read)
