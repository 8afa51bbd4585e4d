"""test_prometheus_fleet.py SERVE MODEL SHAPE: one real Prometheus scrapes two instances of
examples/serve.cpp, one of them slower, and docs/production.md's fleet queries name the slower one.

Instance a runs MODEL on SHAPE, instance b on a batch 8 times larger at 4 times the resolution
(128 times the convolutions' work); each carries its own --label replica=X, every forward sampled.
After both finished their forwards and a few scrapes followed, the "slowest instance per module"
query, run as docs/production.md writes it (its window widened to cover the run), must name
replica b for stem and block (the model's convolutions), with b's port as its instance; the skew
query must give each of them a skew over 1.2; every series carries its replica label. Exit 77
(skipped) without prometheus. Every process it starts dies with it (serve_util.Processes)."""

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
from serve_metrics import production_doc  # noqa: E402

serve, model, shape = sys.argv[1:4]
prometheus = shutil.which("prometheus")
if not prometheus:
    print("prometheus is not installed (Debian: apt-get install prometheus): skipped")
    sys.exit(77)

FORWARDS = 30
MODULES = ["stem", "block"]  # models/nested.pt's convolutions: b's input makes them far slower
dims = shape.split(":")[0].split("x")
slow_shape = "x".join([str(int(dims[0]) * 8), dims[1]] + [str(int(d) * 4) for d in dims[2:]])

work = tempfile.mkdtemp(prefix="lp-prometheus-fleet-")
try:
    ports = {}
    while len(set(ports.values())) < 3:
        ports = {"a": su.free_port(), "b": su.free_port(), "prom": su.free_port()}
    job = "layerprof-fleet"
    window = "120s"
    _, doc_queries = production_doc()
    fleet = [q for q in doc_queries if "topk by (model, module)" in q or "quantile by" in q]
    assert len(fleet) == 2, f"docs/production.md: want the two fleet queries, got {fleet}"
    slowest_q, skew_q = (q.replace("[5m]", f"[{window}]") for q in fleet)
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as f:
        f.write(f"""global:
  scrape_interval: 1s
scrape_configs:
  - job_name: {job}
    static_configs:
      - targets: ['127.0.0.1:{ports["a"]}', '127.0.0.1:{ports["b"]}']
""")
    prom_api = f"http://127.0.0.1:{ports['prom']}"

    def query(expr, at=None):
        params = {"query": expr}
        if at is not None:
            params["time"] = f"{at:.3f}"
        status, _, body = su.http_get(f"{prom_api}/api/v1/query?" + urllib.parse.urlencode(params))
        reply = json.loads(body)
        if status != 200 or reply.get("status") != "success":
            raise AssertionError(f"query {expr}: {status} {body}")
        return reply["data"]["result"]

    with su.Processes() as procs:
        prom_log = os.path.join(work, "prometheus.log")
        prom = procs.start([prometheus, f"--config.file={config}",
                            f"--storage.tsdb.path={work}/tsdb",
                            f"--web.listen-address=127.0.0.1:{ports['prom']}"], prom_log)

        def ready():
            try:
                return su.http_get(f"{prom_api}/-/ready", timeout=2)[0] == 200
            except OSError:
                return False
        su.wait_for("prometheus to be ready", ready, 60, prom, prom_log)
        su.wait_for("the first scrapes", lambda: len(query(f'up{{job="{job}"}}')) == 2, 60, prom,
                    prom_log)

        # One thread each, at most 5 forwards a second: the two share this machine's cores.
        servers, logs = {}, {}
        for replica, input_shape in (("a", shape), ("b", slow_shape)):
            logs[replica] = os.path.join(work, f"serve_{replica}.log")
            servers[replica] = procs.start(
                [serve, model, "--input", input_shape, "--sample-every", "1", "--label",
                 f"replica={replica}", "--port", str(ports[replica]), "--threads", "1", "--rate",
                 "5", "--forwards", str(FORWARDS)], logs[replica])
        for replica in ("a", "b"):
            su.wait_for(f"replica {replica}'s forwards",
                        lambda r=replica: su.log_has(logs[r], "forwards done"), 120,
                        servers[replica], logs[replica])
        done = time.time()

        # Scrapes of both after their forwards: the window then holds each one's whole run.
        def scraped_after():
            r = query(f'timestamp(up{{job="{job}"}} == 1)')
            times = [float(x["value"][1]) for x in r]
            return len(times) == 2 and min(times) > done + 3 and min(times)
        at = su.wait_for("three scrapes of both after the forwards", scraped_after, 60, prom,
                         prom_log)

        replicas = query(f'count by (replica) (layerprof_module_calls_total{{job="{job}"}})', at)
        assert sorted(r["metric"].get("replica") for r in replicas) == ["a", "b"], replicas

        slowest = {r["metric"]["module"]: r["metric"] for r in query(slowest_q, at)}
        for module in MODULES:
            m = slowest.get(module)
            assert m and m.get("replica") == "b" and m.get("instance") == f"127.0.0.1:{ports['b']}", \
                (module, m, slowest_q)
        skews = {r["metric"]["module"]: float(r["value"][1]) for r in query(skew_q, at)}
        for module in MODULES:
            assert math.isfinite(skews.get(module, math.nan)) and skews[module] > 1.2, \
                (module, skews, skew_q)
        print(f"slowest instance of {MODULES}: replica b; skews "
              f"{[round(skews[m], 2) for m in MODULES]}")
    print("test_prometheus_fleet: ok")
finally:
    shutil.rmtree(work, ignore_errors=True)
