// Checks of a GEMM call's arguments, before anything is launched: each failure throws
// tilecast::Error naming the operand and the rule.
#pragma once

#include "api/call.hpp"
#include "tilecast/plan/gemm_plan.hpp"
#include "tilecast/types.hpp"

namespace tilecast::api {

// The GEMM these views describe, for the planner (the one place views map into the core
// vocabulary), or an Error. Pure: it reads no device memory
// and so runs without a GPU (where_is supplies pointer facts, see below).
struct PointerFacts {
  bool device_memory = false;  // device (or managed) memory of the current device
  int device = -1;
  uint64_t bytes_to_end = 0;   // from the pointer to the end of its allocation; 0: not known
};
using PointerQuery = PointerFacts (*)(const void*);

// `layout` says how a and b are stored (the views are the stored matrices).
plan::GemmDesc validate_gemm(const MatrixView& a, const MatrixView& b, const MatrixView& d,
                              const GemmEpilogue& epilogue, PointerQuery where_is,
                              GemmLayout layout = GemmLayout::kNT);

// The grouped forms (tilecast/grouped.hpp): views, group array and hints of args.group.
plan::GemmDesc validate_grouped(const CallArgs& args, PointerQuery where_is);

// Either of the above, by the call's type.
plan::GemmDesc validate_call(const CallArgs& args, PointerQuery where_is);

// cudaPointerGetAttributes for the current device.
PointerFacts query_pointer(const void* p);

}  // namespace tilecast::api
