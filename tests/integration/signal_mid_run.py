"""signal_mid_run.py: sends a signal to a layerprof run once it is profiling, not after a guess.

    python3 signal_mid_run.py SIGNAL ERR_FILE LAYERPROF ARGS...

Runs LAYERPROF ARGS with its stderr on a pseudo-terminal, so that it prints its progress line
(cli/main.c shows it only on a terminal), waits until that line says at least one profiled
iteration is done, then sends SIGNAL (INT or TERM). The signal's moment is thus an event of the
run, not a sleep: on a loaded machine a fixed sleep can land while the model still loads (the
run then stops with no profiled iteration) and on a fast one it only wastes time.

Writes what the run printed on stderr to ERR_FILE, less its progress lines, and exits with the
run's exit code (128 + the signal when it died of it). Exits 124 when no profiled iteration was
seen within the time limit, after killing the run.
"""
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time

LIMIT_S = 300  # for the model to load and one forward to run, under the sanitizers and load
PROGRESS = re.compile(rb"\r\x1b\[K(?:layerprof: (?:warm-up|profiling) \d+/\d+)?")


def main():
    if len(sys.argv) < 4 or sys.argv[1] not in ("INT", "TERM"):
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    sig = getattr(signal, "SIG" + sys.argv[1])
    err_file, cmd = sys.argv[2], sys.argv[3:]
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stderr=slave)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + LIMIT_S
    sent = False
    while True:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: the run closed its end
                chunk = b""
            if not chunk:
                break
            seen += chunk
        if not sent and re.search(rb"profiling [1-9]\d*/", seen):
            proc.send_signal(sig)
            sent = True
        if not sent and time.monotonic() > deadline:
            proc.kill()
            proc.wait()
            print(f"signal_mid_run: no profiled iteration within {LIMIT_S} s", file=sys.stderr)
            return 124
        if not ready and proc.poll() is not None:
            break
    rc = proc.wait()
    os.close(master)
    with open(err_file, "wb") as f:
        f.write(PROGRESS.sub(b"", seen).replace(b"\r\n", b"\n"))
    if not sent:
        print("signal_mid_run: the run ended before its first profiled iteration was seen",
              file=sys.stderr)
        return 125
    return 128 - rc if rc < 0 else rc


if __name__ == "__main__":
    sys.exit(main())
