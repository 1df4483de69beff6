// What a static persistent launch reads of its operands from HBM, by an LRU model of L2: the
// planner's band height (src/plan/band_height.cpp) takes the band that reads least.
//
// The launch's resident units walk their units in waves (unit c of wave w is wG + c) and the units
// of a wave walk K together, so the model touches, for each wave and each of kL2ReuseChunks slices
// of K, the A rows and B columns of every unit of the wave, in an LRU cache of the share of L2 that
// operands get (kOperandL2Share); a miss costs its bytes. Measured on the H200 (Nsight Compute's
// dram__bytes_read; bench/results/2026-12-04-h200-last-wave.md run C, and
// bench/results/2026-12-05-h200-serpentine-l2-share.md): 8192^3 with 128x256 tiles read 2.35, 1.49,
// 1.23 and 1.47 GB at bands 4, 8, 16 and 32, where this model says 2.35, 1.49, 1.23 and 1.47. (At
// band 1 it says 2.31 against 2.90: a wave then spans four rows of tiles, whose CTAs drift apart in
// K; and on 16384^3, 62 waves of 256 k-steps, the chip read 1.3-2.4x the model at bands 8-64, and
// 15.5-22.5 GB in four processes at band 16, as much with units claimed in walk order:
// bench/results/2026-12-05-h200-grouped-bands-l2-drift.md. There the model reads each wave's rows
// and columns exactly once (test_l2_reuse.cpp, LongSquaresReadEachWaveOnce), so neither the share
// nor the slices can close the gap: the chip reads blocks again within a wave, as units whose
// progress through K has spread apart would.)
#pragma once

#include <cstdint>

#include "tilecast/device/scheduler/tile_scheduler.cuh"

namespace tilecast::plan {

// Slices of K the model walks a wave's units through. Its bytes hardly depend on it: on the m =
// 4096 list and 8192^3 they moved at most 5% between 8, 16 and 32 slices and one slice a k-step,
// and 8 keeps the planner's cost to milliseconds on 16384^3.
inline constexpr uint32_t kL2ReuseChunks = 8;

// The share of L2 that holds operands for the next unit to reuse: half. Hopper's L2 is two
// partitions, each near half the SMs; if a line that SMs on both sides read is held in both (the
// likely reason, not measured apart), an operand that the whole chip shares sees half the
// capacity. One constant for every shape, fitted against Nsight Compute's dram__bytes_read on the
// H200 (bench/results/2026-12-05-h200-serpentine-l2-share.md): with half of its 60 MiB the model is
// within 4% on 4096x2112x7168 (bands 2-32), 4096x24576x1536 (2-32), 8192^3 (4-32) and serpentine K
// on 8192^3 and 4096x7168x16384; with all of it, it read half the chip's bytes on 4096x2112x7168
// and 9-32% under them with serpentine K.
inline constexpr double kOperandL2Share = 0.5;

// The LRU capacity the model gives operands on a device with `l2_bytes` of L2.
inline uint64_t operand_l2_bytes(uint64_t l2_bytes) {
  return static_cast<uint64_t>(static_cast<double>(l2_bytes) * kOperandL2Share);
}

// HBM bytes of A and B read by `resident_units` units in lockstep walking `problem` (unsplit; any
// type, grouped ones with group data in host memory, each group's grid after the last, as the
// scheduler walks them) in `schedule`'s order (its band; with `k_serpentine` the odd waves walk K
// backwards), on a device with `l2_bytes` of L2 (of which operand_l2_bytes hold operands). At
// least A's and B's bytes (each read once), at most every unit reading its own.
double operand_hbm_bytes(const GemmProblem& problem, const TileConfig& schedule, uint32_t resident_units,
                         uint64_t l2_bytes, bool k_serpentine = false);

}  // namespace tilecast::plan
