"""The names LP_FORMAT_OPENMETRICS gives its series, and docs/production.md's PromQL, in one place
for the tests of layerprof-serve."""

import os
import re

import serve_util as su

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
CALLS = "layerprof_module_calls_total"
SAMPLED = "layerprof_sampled_forwards_total"
SELF_HIST = "layerprof_module_self_seconds"
ROOT = "."  # the module label of the model itself


def module_calls(samples, module):
    return su.sample(samples, CALLS, module=module)


def sampled_forwards(samples):
    return su.sample(samples, SAMPLED)


def self_count(samples, module):
    return su.sample(samples, SELF_HIST + "_count", module=module)


def production_doc():
    """(the recording rules' YAML, [the promql blocks]) of docs/production.md, as written there."""
    here = os.path.dirname(os.path.abspath(__file__))
    text = open(os.path.join(here, "..", "..", "docs", "production.md")).read()
    rules = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "groups:" in b]
    queries = re.findall(r"```promql\n(.*?)```", text, re.S)
    if len(rules) != 1 or len(queries) < 3:
        raise AssertionError("docs/production.md: want one rules block and 3 promql blocks")
    return rules[0], queries
