// The planner's refusal of a problem and its overrides on the H200 model, as the tests read it.
#pragma once

#include <string>

#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::plan {

// The message plan_gemm throws for (d, o), or "" when it plans.
inline std::string error_of(const GemmDesc& d, const GemmConfig& o) {
  try {
    plan_gemm(d, DeviceFacts::h200_model(), o);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace tilecast::plan
