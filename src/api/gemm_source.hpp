// The generated source of one GEMM kernel: its spec written into a traits struct, field by field
// name (the kernel reads them back with spec_of<Traits>() in spec.cuh).
#pragma once

#include "jit/compiler.hpp"
#include "tilecast/device/kernels/gemm_sm90/spec.cuh"

namespace tilecast::api {

jit::KernelSpec gemm_kernel_source(const GemmKernelSpec& spec);

}  // namespace tilecast::api
