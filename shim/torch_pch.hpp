// torch_pch.hpp: the libtorch headers nearly every shim file includes (through shim_internal.hpp),
// compiled once per build into a precompiled header instead of once per file: they are a few
// hundred thousand lines, and CI builds the shim five times (README, "CI has 90 minutes"). Only
// what is in every libtorch layerprof supports; never include this file directly.
#pragma once

#include <ATen/record_function.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/script.h>
