// What a static persistent launch reads of its operands from HBM, by an LRU model of L2: the
// planner's band height (src/plan/band_height.cpp) takes the band that reads least.
//
// The launch's resident units walk their units in waves (unit c of wave w is wG + c) and the units
// of a wave walk K together, so the model touches, for each wave and each of kL2ReuseChunks slices
// of K, the A rows and B columns of every unit of the wave, in an LRU cache of L2's size; a miss
// costs its bytes. Measured on the H200 (bench/results/2026-12-04-h200-last-wave.md, run C): 8192^3
// with 128x256 tiles read 2.35, 1.49 and 1.23 GB at bands 4, 8 and 16 (Nsight Compute's
// dram__bytes_read), where this model says 2.34, 1.49 and 1.20. (At band 1 it says 2.31 against
// 2.90: a wave then spans four rows of tiles, whose CTAs drift apart in K.)
#pragma once

#include <cstdint>

#include "tilecast/device/scheduler/tile_scheduler.cuh"

namespace tilecast::plan {

// Slices of K the model walks a wave's units through. Its bytes hardly depend on it: on the m =
// 4096 list and 8192^3 they moved at most 5% between 8, 16 and 32 slices and one slice a k-step,
// and 8 keeps the planner's cost to milliseconds on 16384^3.
inline constexpr uint32_t kL2ReuseChunks = 8;

// HBM bytes of A and B read by `resident_units` units in lockstep walking `problem` (unsplit; any
// type, grouped ones with group data in host memory, each group's grid after the last, as the
// scheduler walks them) in `schedule`'s order (its band; with `k_serpentine` the odd waves walk K
// backwards), with an L2 of `l2_bytes`. At least A's and B's bytes (each read once), at most
// every unit reading its own.
double operand_hbm_bytes(const GemmProblem& problem, const TileConfig& schedule, uint32_t resident_units,
                         uint64_t l2_bytes, bool k_serpentine = false);

}  // namespace tilecast::plan
