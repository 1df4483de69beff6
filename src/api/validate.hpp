// Checks of a GEMM call's arguments, before anything is launched: each failure throws
// tilecast::Error naming the operand and the rule. README.md, "Bad input", lists every rule with
// its message; tests/cpu/api/test_validate.cpp proves each.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "api/call.hpp"
#include "tilecast/plan/gemm_plan.hpp"
#include "tilecast/types.hpp"

namespace tilecast::api {

// What the checks need to know about one pointer, as the calling thread sees it. The checks
// themselves are pure: they read no device memory and run without a GPU, where a test supplies
// these facts (query_pointer asks CUDA).
struct PointerFacts {
  bool device_memory = false;  // device or managed memory, of any device
  int device = -1;             // the device holding it (managed memory: the current device)
  int current_device = -1;     // the device the call runs on
  // The allocation holding the pointer, [alloc_base, alloc_base + alloc_bytes); 0 bytes: unknown.
  uint64_t alloc_base = 0;
  uint64_t alloc_bytes = 0;
};
using PointerQuery = PointerFacts (*)(const void*);

// The GEMM these views describe, for the planner (the one place views map into the core
// vocabulary), or an Error. A problem with nothing to compute (nothing_to_do) is valid: cuBLAS
// returns at once for m = 0 or n = 0, and so do we; so is k = 0 (epilogue_only). `layout` says
// how a and b are stored (the views are the stored matrices).
plan::GemmDesc validate_gemm(const MatrixView& a, const MatrixView& b, const MatrixView& d,
                              const GemmEpilogue& epilogue, PointerQuery where_is,
                              GemmLayout layout = GemmLayout::kNT);

// The grouped forms (tilecast/grouped.hpp): views, group array and hints of args.group.
plan::GemmDesc validate_grouped(const CallArgs& args, PointerQuery where_is);

// Either of the above, by the call's type, and the config's overrides.
plan::GemmDesc validate_call(const CallArgs& args, PointerQuery where_is);

// Whether a valid problem writes nothing (m, n or the batch is 0): the call returns without
// launching, and without reading the pointers (an empty framework tensor may hold null).
bool nothing_to_do(const plan::GemmDesc& desc);
// Whether a valid problem has k = 0 (tilecast::gemm only; the grouped calls refuse it): D =
// beta * C + bias, as cuBLAS writes it, by launch_epilogue_only (api/epilogue_only.hpp).
bool epilogue_only(const plan::GemmDesc& desc);

// The device a stream belongs to; -1 for the streams that follow the current device (the legacy
// and per-thread default streams). Throws Error when CUDA cannot say (a destroyed stream).
using StreamQuery = int (*)(cudaStream_t);
// Refuses a stream of another device than `current_device`: its kernels would run there, on
// this device's descriptors.
void check_stream(cudaStream_t stream, int current_device, StreamQuery device_of);

// cudaPointerGetAttributes and the driver's allocation range (cuMemGetAddressRange).
PointerFacts query_pointer(const void* p);
// cudaStreamGetDevice.
int query_stream_device(cudaStream_t stream);

}  // namespace tilecast::api
