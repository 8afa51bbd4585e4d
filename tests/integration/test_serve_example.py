"""test_serve_example.py SERVE MODEL SHAPE: examples/serve.cpp run as a user would.

- Bad input: one line on stderr and exit 2 (a flag's value, the model, inputs the model refuses);
  a port already in use: one line and exit 1.
- A run of a fixed number of forwards, every one sampled: /metrics answers with the exposition's
  content type, its figures are the run's (sampled forwards, a module's calls and its histogram's
  count; the self times add up to the forward's), a scrape while the forwards run succeeds too, and `promtool check metrics` passes on it
  (where promtool is installed; said otherwise). SIGTERM stops it with exit 0.
- Every 4th forward sampled: a quarter of the forwards, and their calls."""

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_util as su  # noqa: E402
from serve_metrics import (CONTENT_TYPE, ROOT, SELF_HIST, module_calls,  # noqa: E402
                           sampled_forwards, self_count)

serve, model, shape = sys.argv[1:4]


def run(args, timeout=120):
    return subprocess.run([serve] + args, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)


def expect_failure(args, status, words):
    r = run(args)
    lines = r.stderr.strip().splitlines()
    if r.returncode != status or len(lines) != 1 or words.lower() not in lines[0].lower():
        raise AssertionError(f"{args}: want exit {status} and one line with '{words}', got "
                             f"{r.returncode} and:\n{r.stderr}{r.stdout}")


work = tempfile.mkdtemp(prefix="lp-serve-")
try:
    # Bad input, each before anything is served.
    base = [model, "--input", shape]
    expect_failure(base + ["--sample-every", "0"], 2, "--sample-every")
    expect_failure(base + ["--sample-every", "x"], 2, "--sample-every")
    for p in ["0", "1.5", "-0.1", "nan", "abc"]:
        expect_failure(base + ["--sample-probability", p], 2, "--sample-probability")
    for p in ["0", "65536", "http", "-1"]:
        expect_failure(base + ["--port", p], 2, "--port")
    expect_failure(base + ["--metrics-depth", "-1"], 2, "--metrics-depth")
    expect_failure(base + ["--bogus", "1"], 2, "unknown option")
    expect_failure(base + ["--bogus"], 2, "unknown option")
    expect_failure(base + ["--port"], 2, "needs a value")
    expect_failure(["--port", "9000"], 2, "no model")
    expect_failure(["/nonexistent/model.pt"], 2, "cannot load")
    corrupt = os.path.join(work, "corrupt.pt")
    with open(corrupt, "wb") as f:
        f.write(b"this is not a TorchScript archive\n" * 10)
    expect_failure([corrupt], 2, "cannot load")
    wrong = "1x5x" + "x".join(shape.split("x")[2:])  # the wrong number of channels
    expect_failure([model, "--input", wrong], 2, "failed on the inputs")
    r = run(["--help"])
    assert r.returncode == 0 and "--sample-every" in r.stdout, r

    # A port that is taken: a runtime failure, exit 1.
    with socket.socket() as taken:
        taken.bind(("", 0))
        taken.listen()
        expect_failure(base + ["--port", str(taken.getsockname()[1])], 1, "port")

    # A fixed number of forwards, every one sampled, on 2 threads; a scrape while they run.
    forwards = 40
    port = su.free_port()
    log = os.path.join(work, "serve.log")
    with su.Processes() as procs:
        proc = procs.start([serve] + base + ["--sample-every", "1", "--port", str(port),
                                             "--threads", "2", "--rate", "40",
                                             "--forwards", str(forwards)], log)
        url = f"http://127.0.0.1:{port}/metrics"
        su.wait_for("the server", lambda: su.log_has(log, "/metrics,"), 60, proc, log)
        status, _, body = su.http_get(url)
        assert status == 200, (status, body)
        su.wait_for("the forwards", lambda: su.log_has(log, "forwards done"), 60, proc, log)

        status, content_type, body = su.http_get(url)
        assert status == 200, (status, body)
        assert content_type == CONTENT_TYPE, content_type
        samples = su.parse_exposition(body)
        assert sampled_forwards(samples) == forwards, body
        model_calls = module_calls(samples, ROOT)
        assert model_calls == forwards, (model_calls, body)
        for module in ["stem", "block"]:
            calls = module_calls(samples, module)
            assert calls > 0 and calls % forwards == 0, (module, calls)  # n per forward
            assert self_count(samples, module) == calls, (module, body)
        # The exported modules' self times add up to the forward's total (docs/production.md's
        # share query divides by their sum).
        self_sums = [v for (n, ls), v in samples.items() if n == SELF_HIST + "_sum"]
        forward_total = su.sample(samples, "layerprof_module_total_seconds_sum", module=ROOT)
        assert forward_total > 0 and abs(sum(self_sums) - forward_total) < 1e-6, \
            (sum(self_sums), forward_total)
        # Other paths and methods are refused, not crashed on.
        assert su.http_get(f"http://127.0.0.1:{port}/")[0] == 404

        promtool = shutil.which("promtool")
        if promtool:
            r = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True,
                               text=True, timeout=60)
            assert r.returncode == 0, f"promtool check metrics:\n{r.stdout}{r.stderr}\n{body}"
        else:
            print("promtool is not installed (Debian: prometheus): its check was not run")

        proc.send_signal(15)
        assert proc.wait(timeout=30) == 0, open(log).read()
        assert su.log_has(log, f"stopped by SIGTERM after {forwards} forwards"), open(log).read()
    # Every 4th forward over 2 threads: exactly a quarter of them, their calls and nothing else.
    port = su.free_port()
    with su.Processes() as procs:
        proc = procs.start([serve] + base + ["--sample-every", "4", "--port", str(port),
                                             "--threads", "2", "--rate", "0",
                                             "--forwards", str(forwards)], log)
        su.wait_for("the forwards", lambda: su.log_has(log, "forwards done"), 60, proc, log)
        samples = su.parse_exposition(su.http_get(f"http://127.0.0.1:{port}/metrics")[2])
        assert sampled_forwards(samples) == forwards // 4, samples
        assert module_calls(samples, ROOT) == forwards // 4, samples
        assert self_count(samples, "block") == module_calls(samples, "block") == forwards // 2
    print("test_serve_example: ok")
finally:
    shutil.rmtree(work, ignore_errors=True)
