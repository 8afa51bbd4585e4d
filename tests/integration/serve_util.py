"""What the tests of layerprof-serve share: starting processes that cannot outlive the test,
free ports, HTTP without curl, and reading the Prometheus text exposition."""

import ctypes
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request

_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent():
    # A child this test starts is killed when the test dies, even by SIGKILL (ctest's timeout).
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


class Processes:
    """Every process started through it is stopped on exit (with), on every path."""

    def __init__(self):
        self.started = []

    def start(self, argv, log_path):
        log = open(log_path, "wb")
        proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, preexec_fn=_die_with_parent)
        log.close()
        self.started.append(proc)
        return proc

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for proc in self.started:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.started:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        return False


def free_port():
    """A port nothing listens on now (the kernel's pick); another program could still take it
    before ours binds, which fails the test loudly rather than silently."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_get(url, timeout=5):
    """(status, content type, body); connection errors raise."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.headers.get("Content-Type"), response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.headers.get("Content-Type"), e.read().decode()


def wait_for(what, check, timeout, proc=None, log_path=None):
    """Polls check() until it returns something true, or fails after `timeout` seconds (or at
    once when `proc` exited), showing the log."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        if proc is not None and proc.poll() is not None:
            break
        time.sleep(0.1)
    log = open(log_path).read() if log_path and os.path.exists(log_path) else ""
    raise AssertionError(f"timed out waiting for {what}\n{log}")


def log_has(path, text):
    return os.path.exists(path) and text in open(path).read()


_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\S+)?$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_exposition(text):
    """{(name, frozenset of (label, value)): float} of every sample line."""
    samples = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        if not m:
            raise AssertionError(f"not a sample line: {line!r}")
        labels = frozenset(_LABEL.findall(m.group(2) or ""))
        samples[(m.group(1), labels)] = float(m.group(3))
    return samples


def sample(samples, name, **labels):
    """The value of the one sample of `name` whose labels include `labels`."""
    want = set(labels.items())
    found = [v for (n, ls), v in samples.items() if n == name and want <= set(ls)]
    if len(found) != 1:
        names = sorted({n for n, _ in samples})
        raise AssertionError(f"{len(found)} samples of {name} with {labels}; names: {names}")
    return found[0]
