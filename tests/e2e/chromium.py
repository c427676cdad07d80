"""Headless Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: no port, no extra
package): open a page, evaluate in it or in one of its frames, click, collect console errors and uncaught exceptions,
take a screenshot."""

import base64
import fcntl
import json
import os
import queue
import subprocess
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

FLAGS = [
    "--headless",
    "--no-sandbox",  # root in CI containers
    "--disable-gpu",
    "--no-first-run",
    "--disable-extensions",
    "--remote-debugging-pipe",
    # keep a sandboxed iframe in its page's process, so one session sees all of its frames
    "--disable-features=IsolateSandboxedIframes",
    "--disable-site-isolation-trials",
]


def _above_four(fd: int) -> int:
    """`fd` moved to a number above 4 (the browser's 3 and 4 are wired from it)."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD, 10)
    os.close(fd)
    return moved


class Browser:
    """One Chromium process and its first page; `errors` are the console errors and exceptions of every frame."""

    def __init__(self, executable: str, profile: Path) -> None:
        to_child, self._commands = os.pipe()
        self._replies, from_child = os.pipe()
        to_child, from_child = (_above_four(fd) for fd in (to_child, from_child))
        # the DevTools pipe is fd 3 (commands in) and fd 4 (replies out) in the browser
        wiring = f'exec "$0" "$@" 3<&{to_child} 4>&{from_child} {to_child}<&- {from_child}>&-'
        self.process = subprocess.Popen(
            ["bash", "-c", wiring, executable, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            pass_fds=(to_child, from_child),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(to_child)
        os.close(from_child)
        self._inbox: queue.Queue[dict[str, Any]] = queue.Queue()
        self.events: list[dict[str, Any]] = []
        self._next_id = 0
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        page = next(t for t in self.send("Target.getTargets")["targetInfos"] if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", targetId=page["targetId"], flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.send(f"{domain}.enable", session=self.session)

    def _read(self) -> None:
        buffer = b""
        while chunk := os.read(self._replies, 65536):
            buffer += chunk
            *messages, buffer = buffer.split(b"\0")
            for message in messages:
                self._inbox.put(json.loads(message))

    def send(self, method: str, session: str | None = None, timeout: float = 30, **params: Any) -> dict[str, Any]:
        """Send one command and wait for its reply; events seen meanwhile go to `events`."""
        self._next_id += 1
        command: dict[str, Any] = {"id": self._next_id, "method": method, "params": params}
        if session:
            command["sessionId"] = session
        os.write(self._commands, json.dumps(command).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            message = self._inbox.get(timeout=max(0.01, deadline - time.monotonic()))
            if message.get("id") == self._next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return dict(message["result"])
            self.events.append(message)

    def evaluate(self, expression: str, context: int | None = None) -> Any:
        """The JSON value of `expression` in the page (or in execution context `context`)."""
        params: dict[str, Any] = {"expression": expression, "returnByValue": True, "awaitPromise": True}
        if context is not None:
            params["contextId"] = context
        reply = self.send("Runtime.evaluate", session=self.session, **params)
        if "exceptionDetails" in reply:
            raise RuntimeError(f"evaluation failed: {reply['exceptionDetails'].get('text')}")
        return reply["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 30, context: int | None = None) -> Any:
        """Poll `expression` until it is truthy."""
        deadline = time.monotonic() + timeout
        while not (value := self.evaluate(expression, context)):
            if time.monotonic() > deadline:
                raise TimeoutError(f"still false after {timeout} s: {expression}")
            time.sleep(0.1)
        return value

    def frame_context(self, frame_id: str) -> int:
        """The current default execution context of frame `frame_id` (a child frame of the page): the last one
        created, since each document the frame loads gets a new one."""
        self.evaluate("0")  # flush the events sent so far
        for event in reversed(self.events):
            if event.get("method") == "Runtime.executionContextCreated":
                context = event["params"]["context"]
                aux = context.get("auxData", {})
                if aux.get("frameId") == frame_id and aux.get("isDefault"):
                    return int(context["id"])
        raise LookupError(f"no execution context for frame {frame_id}")

    def child_frames(self) -> list[str]:
        """Ids of the page's child frames."""
        tree = self.send("Page.getFrameTree", session=self.session)["frameTree"]
        return [child["frame"]["id"] for child in tree.get("childFrames", [])]

    @property
    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and error log entries (CSP violations among them) seen so far."""
        self.evaluate("0")
        found = []
        for event in self.events:
            method, params = event.get("method"), event.get("params", {})
            if method == "Runtime.exceptionThrown":
                found.append(params["exceptionDetails"].get("text", "exception"))
            elif method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                found.append(" ".join(str(a.get("value", a.get("description"))) for a in params.get("args", [])))
            elif method == "Log.entryAdded" and params["entry"]["level"] == "error":
                found.append(params["entry"]["text"])
        return found

    def click(self, x: float, y: float) -> None:
        """A left mouse click at (`x`, `y`) of the page's viewport, as a person's hand makes one (hit-tested by the
        browser, so it lands on whatever is drawn there, in any frame)."""
        for kind in ("mousePressed", "mouseReleased"):
            self.send(
                "Input.dispatchMouseEvent", session=self.session, type=kind, x=x, y=y, button="left", clickCount=1
            )

    def screenshot(self, path: Path) -> None:
        """A PNG of the page's viewport."""
        path.write_bytes(base64.b64decode(self.send("Page.captureScreenshot", session=self.session)["data"]))

    def close(self) -> None:
        """End the browser (Browser.close, then terminate if it lingers)."""
        with suppress(RuntimeError, queue.Empty, OSError):
            self.send("Browser.close", timeout=5)
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self._reader.join(timeout=5)  # the browser's end of the pipe is closed: the reader has seen its end
        os.close(self._commands)
        os.close(self._replies)


@contextmanager
def browser(executable: str, profile: Path) -> Iterator[Browser]:
    """A headless Chromium for the block, ended afterwards."""
    chrome = Browser(executable, profile)
    try:
        yield chrome
    finally:
        chrome.close()
