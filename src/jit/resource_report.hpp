// What ptxas says about one kernel: registers, spills, stack and shared memory, parsed from the
// `ptxas -v` lines of an NVRTC program log. CI compiles every kernel variant and asserts
// has_spills() is false through this.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace tilecast::jit {

struct ResourceReport {
  bool found = false;              // the log held a report for the entry function
  int registers = 0;               // per thread
  int barriers = 0;                // named barriers used
  int spill_store_bytes = 0;       // entry function, plus any non-entry function in the program
  int spill_load_bytes = 0;        // (one kernel per program, so those are its callees)
  int stack_frame_bytes = 0;       // the entry function's own frame
  int cumulative_stack_bytes = 0;  // with callees, where ptxas prints it
  int shared_bytes = 0;            // static shared memory; dynamic smem is a launch parameter

  bool has_spills() const { return spill_store_bytes > 0 || spill_load_bytes > 0; }
  bool uses_local_memory() const {
    return has_spills() || stack_frame_bytes > 0 || cumulative_stack_bytes > 0;
  }
  // One line: "regs=168 spill_st=0 spill_ld=0 stack=0 cum_stack=0 smem=0 barriers=1", or
  // "unknown" when no report was found; from_string reads both back.
  std::string to_string() const;
  // Reads to_string()'s format back (cache entries store it); nullopt when malformed.
  static std::optional<ResourceReport> from_string(std::string_view line);

  friend bool operator==(const ResourceReport&, const ResourceReport&) = default;
};

// The report of entry function `lowered_name` (its mangled name) in an NVRTC log compiled with
// --ptxas-options=-v. found == false when the log has no section for it.
ResourceReport parse_ptxas_report(std::string_view log, std::string_view lowered_name);

}  // namespace tilecast::jit
