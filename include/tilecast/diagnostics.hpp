// What the library can tell after a kernel failed on the device.
#pragma once

#include <optional>
#include <string>

namespace tilecast {

// A GEMM barrier wait that timed out traps, which ends the CUDA context; before trapping it
// records which barrier, stage, block and thread waited, in host memory that stays readable.
// Returns that record as text (and clears it), or nothing when no wait timed out.
std::optional<std::string> take_wait_timeout_report();

// A grouped GEMM whose group data (in device memory, never read by the host) holds sizes the
// problem cannot mean traps the same way (tilecast/grouped.hpp); this says which entry was wrong,
// as text (and clears the record), or nothing when no kernel trapped on its group data.
std::optional<std::string> take_layout_fault_report();

// The bound on every barrier wait of the GEMM kernels: TILECAST_WAIT_TIMEOUT_MS, default 60 s.
uint64_t wait_timeout_ns();

}  // namespace tilecast
