"""The names LP_FORMAT_OPENMETRICS gives its series (docs/production.md), in one place for the
tests of layerprof-serve."""

import serve_util as su

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
CALLS = "layerprof_module_calls_total"
SAMPLED = "layerprof_sampled_forwards_total"
SELF_HIST = "layerprof_module_self_seconds"


def module_calls(samples, module):
    return su.sample(samples, CALLS, module=module)


def sampled_forwards(samples):
    return su.sample(samples, SAMPLED)


def self_count(samples, module):
    return su.sample(samples, SELF_HIST + "_count", module=module)
