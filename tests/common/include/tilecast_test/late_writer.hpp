// A kernel that writes a GEMM's input late while letting the next grid on the stream launch at
// once (griddepcontrol.launch_dependents first): what a GEMM launched programmatically behind it
// reads unless it waits for it (griddepcontrol.wait) before its first load.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "tilecast_test/device_matrix.hpp"

namespace tilecast::test {

// dst = src (same shape and dtype, contiguous rows) on `stream`, after spinning `delay_us`
// microseconds of the GPU's global timer.
void copy_late(const MatrixView& src, const MatrixView& dst, uint32_t delay_us, cudaStream_t stream);

}  // namespace tilecast::test
