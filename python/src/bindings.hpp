// The parts of the _tilecast extension module, each bound by its own file.
#pragma once

#include <nanobind/nanobind.h>

#include "tilecast/plan/device_facts.hpp"

namespace tilecast::python {

void bind_config(nanobind::module_& m);  // config_bindings.cpp: GemmConfig, parse_config
void bind_gemm(nanobind::module_& m);    // gemm_bindings.cpp: gemm_nt, prepare (the epilogue), diagnostics
void bind_grouped(nanobind::module_& m); // grouped_bindings.cpp: the m-grouped and k-grouped GEMMs, their prepare
void bind_jit(nanobind::module_& m);     // jit_bindings.cpp: warm, plan, the cache folder

// The facts the planner uses: the current GPU's ("auto" with a GPU present) or the H200 model
// ("h200", or "auto" without a GPU). Throws tilecast::Error for another name or a non-SM90 GPU.
plan::DeviceFacts device_facts(const std::string& device);

}  // namespace tilecast::python
