"""test_prometheus.py SERVE MODEL SHAPE: a real Prometheus scrapes examples/serve.cpp.

Prometheus (Debian's `prometheus`) scrapes layerprof-serve every second while it runs a fixed
number of forwards, every one sampled, and a few times after they stopped, when the figures no
longer move. Then its HTTP API must report what the session reports on /metrics at that point:
the calls of two modules, the sampled forwards, and a histogram's count. The PromQL of
docs/production.md runs as written there (its recording rule loaded, its windows widened to cover
the run, its offset shortened): the p99 query gives a finite number for both modules, the
recording rule a share for each module, and the "grew most" queries one module with a finite
difference of shares. Exit 77 (skipped) without prometheus.
Every process it starts dies with it, whatever the path out (serve_util.Processes)."""

import json
import math
import os
import shutil
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serve_util as su  # noqa: E402
from serve_metrics import (CALLS, SAMPLED, module_calls, production_doc,  # noqa: E402
                           sampled_forwards, self_count, SELF_HIST)

serve, model, shape = sys.argv[1:4]
prometheus = shutil.which("prometheus")
if not prometheus:
    print("prometheus is not installed (Debian: apt-get install prometheus): skipped")
    sys.exit(77)

FORWARDS = 60
MODULES = ["stem", "block"]  # models/nested.pt: 1 and 2 calls per forward

work = tempfile.mkdtemp(prefix="lp-prometheus-")
try:
    serve_port, prom_port = su.free_port(), su.free_port()
    while prom_port == serve_port:
        prom_port = su.free_port()
    job = "layerprof-test"
    window = "120s"  # the doc's 5m and 1h: wide enough to cover the whole test

    def as_tested(doc_text):
        return (doc_text.replace("[5m]", f"[{window}]").replace("[1h]", f"[{window}]")
                .replace("offset 1d", "offset 2s").replace('"v42"', '"test"')
                .replace('"v41"', '"test"'))
    rules_yaml, doc_queries = production_doc()
    rules = os.path.join(work, "rules.yml")
    with open(rules, "w") as f:
        f.write(as_tested(rules_yaml))
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as f:
        f.write(f"""global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files: ['{rules}']
scrape_configs:
  - job_name: {job}
    static_configs:
      - targets: ['127.0.0.1:{serve_port}']
        labels:
          version: 'test'
""")
    prom_api = f"http://127.0.0.1:{prom_port}"

    def query(expr, at=None):
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        status, _, body = su.http_get(f"{prom_api}/api/v1/query?" + urllib.parse.urlencode(params))
        reply = json.loads(body)
        if status != 200 or reply.get("status") != "success":
            raise AssertionError(f"query {expr}: {status} {body}")
        return reply["data"]["result"]

    def one_value(expr, at):
        result = query(expr, at)
        if len(result) != 1:
            raise AssertionError(f"{expr}: want one series, got {result}")
        return float(result[0]["value"][1])

    with su.Processes() as procs:
        prom_log = os.path.join(work, "prometheus.log")
        prom = procs.start([prometheus, f"--config.file={config}",
                            f"--storage.tsdb.path={work}/tsdb",
                            f"--web.listen-address=127.0.0.1:{prom_port}"], prom_log)

        def ready():
            try:
                return su.http_get(f"{prom_api}/-/ready", timeout=2)[0] == 200
            except OSError:
                return False
        su.wait_for("prometheus to be ready", ready, 60, prom, prom_log)
        # Prometheus syncs its targets every 5 s: the first scrape (failing, the example is not
        # up yet) says it scrapes it every second from now, the run included.
        su.wait_for("the first scrape", lambda: query(f'up{{job="{job}"}}'), 60, prom, prom_log)

        # Forwards at 5 a second: the run spans a dozen scrapes (more on a slow machine, whose
        # forwards only take longer), so rate() sees it grow unless every one of them failed.
        # One scrape would be a bet on the scheduler; a dozen is not (each scrape has 1 s to
        # render a few kB).
        serve_log = os.path.join(work, "serve.log")
        server = procs.start([serve, model, "--input", shape, "--sample-every", "1",
                              "--port", str(serve_port), "--threads", "2", "--rate", "5",
                              "--forwards", str(FORWARDS)], serve_log)
        su.wait_for("the forwards", lambda: su.log_has(serve_log, "forwards done"), 90, server,
                    serve_log)
        stable_since = time.time()

        # What the session says at the stable point, straight from the example.
        status, _, body = su.http_get(f"http://127.0.0.1:{serve_port}/metrics")
        assert status == 200, body
        session = su.parse_exposition(body)
        assert sampled_forwards(session) == FORWARDS, body

        # A few scrapes after the figures stopped moving: the last sample Prometheus took of
        # the target is then at least 5 s past the stable point, so that the recording rule's
        # value 2 s before it (the "grew most" query's offset) is from a final scrape too.
        # A scrape counts only when it succeeded (up == 1): one that timed out under load leaves
        # the series stale at its time, so the test waits for the next good one.
        def scraped_after():
            r = query(f'timestamp(up{{job="{job}"}} == 1)')
            return r and float(r[0]["value"][1]) > stable_since + 5 and float(r[0]["value"][1])
        last_scrape = su.wait_for("five scrapes after the forwards", scraped_after, 60, prom,
                                  prom_log)
        assert one_value(f'up{{job="{job}"}}', last_scrape) == 1
        sel = f'job="{job}"'
        seen = query(f'{SAMPLED}{{{sel}}}[{window}]', last_scrape)
        assert seen and float(seen[0]["values"][0][1]) < FORWARDS, f"no scrape during the run: {seen}"
        for module in MODULES:
            theirs = one_value(f'{CALLS}{{{sel},module="{module}"}}', last_scrape)
            ours = module_calls(session, module)
            assert theirs == ours and ours > 0, (module, theirs, ours)
        theirs = one_value(f'{SAMPLED}{{{sel}}}', last_scrape)
        assert theirs == FORWARDS, (SAMPLED, theirs)
        module = MODULES[1]
        theirs = one_value(f'{SELF_HIST}_count{{{sel},module="{module}"}}', last_scrape)
        assert theirs == self_count(session, module) == module_calls(session, module), theirs

        # docs/production.md's p99 query.
        p99 = query(as_tested(doc_queries[0]), last_scrape)
        by_module = {r["metric"].get("module"): float(r["value"][1]) for r in p99}
        for module in MODULES:
            value = by_module.get(module)
            assert value is not None and math.isfinite(value) and value > 0, (module, p99)
        print(f"p99 self time of {MODULES}: {[by_module[m] for m in MODULES]} s")

        # Its recording rule: a share for each module (test_serve_example checks that the self
        # times it divides add up to the forward's).
        shares = query("model_module:layerprof_self_share:rate1h", last_scrape)
        by_module = {r["metric"].get("module"): float(r["value"][1]) for r in shares}
        assert all(0 < by_module.get(m, 0) < 1 for m in MODULES), shares
        # "Grew most since the deploy", both ways: one module.
        for q in doc_queries[1:3]:
            result = query(as_tested(q), last_scrape)
            assert len(result) == 1 and result[0]["metric"].get("module"), (q, result)
            # A difference of shares. Not 0 here, though nothing changed: rate() extrapolates
            # each series towards its window's start by its own first value (Prometheus'
            # extrapolatedRate), which moves with the window on a run shorter than it.
            value = float(result[0]["value"][1])
            assert math.isfinite(value) and -1 <= value <= 1, (as_tested(q), result)

        # promtool on what Prometheus scraped, as test_serve_example does on a direct read.
        promtool = shutil.which("promtool")
        if promtool:
            import subprocess
            r = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True,
                               text=True, timeout=60)
            assert r.returncode == 0, f"promtool check metrics:\n{r.stdout}{r.stderr}"
    print("test_prometheus: ok")
finally:
    shutil.rmtree(work, ignore_errors=True)
