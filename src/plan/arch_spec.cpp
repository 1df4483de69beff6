#include "tilecast/plan/arch_spec.hpp"

#include "tilecast/device/ptx/wgmma_widths.cuh"
#include "tilecast/types.hpp"

namespace tilecast::plan {
namespace {

// SM90: 64, 128 and 192 rows (one, two and three consumer warpgroups); every wgmma width the
// kernel has; every cluster shape it builds.
constexpr uint32_t kSm90BlockMs[] = {64, 128, 192};
// Four tensor cores per SM, each 512 dense BF16 FMA (1024 FLOP) per clock: 4096 FLOP per clock.
// Check: 132 SMs x 4096 x 1830 MHz = 989.4 TFLOPS, the H100 SXM / H200 datasheet figure.
constexpr uint32_t kSm90DenseBf16FlopsPerClock = 4096;
// Shared memory: 32 banks of 4 bytes per clock per SM (Hopper and Blackwell alike).
constexpr uint32_t kSmemBytesPerClock = 128;

// SM100: 128 rows per CTA, so that a pair computes UMMA M = 256 over two SMs (S4); the widths are
// SM90's (UMMA takes N in steps of 16 up to 256, which includes them all); clusters are 1x1 (the
// one-CTA MMA, M = 128) and the pair shapes along M.
constexpr uint32_t kSm100BlockMs[] = {128};
constexpr ClusterShape kSm100Clusters[] = {{1, 1}, {2, 1}, {4, 1}, {2, 2}};
constexpr uint32_t kSm100CtaGroup = 2;
// Twice SM90's per SM and clock: B200's 2.25 PFLOPS dense BF16 = 148 SMs x 8192 x 1.86 GHz.
constexpr uint32_t kSm100DenseBf16FlopsPerClock = 8192;

const ArchSpec kSm90 = {
    .arch = Arch::kSM90,
    .name = "sm90",
    .runs_kernels = true,
    .block_ms = kSm90BlockMs,
    .block_ns = kWgmmaBF16Widths,
    .clusters = kClusterShapes,
    .mma_cta_group = 1,
    .cluster_divides_shape = false,
    .cluster_tie = ClusterTie::kSmaller,
    .b_read_per_warpgroup = true,
    .dense_bf16_flops_per_clock = kSm90DenseBf16FlopsPerClock,
    .smem_bytes_per_clock = kSmemBytesPerClock,
    .limits = "",
};

const ArchSpec kSm100 = {
    .arch = Arch::kSM100,
    .name = "sm100",
    .runs_kernels = false,
    .block_ms = kSm100BlockMs,
    .block_ns = kWgmmaBF16Widths,
    .clusters = kSm100Clusters,
    .mma_cta_group = kSm100CtaGroup,
    .cluster_divides_shape = true,
    .cluster_tie = ClusterTie::kLarger,
    .b_read_per_warpgroup = false,
    .dense_bf16_flops_per_clock = kSm100DenseBf16FlopsPerClock,
    .smem_bytes_per_clock = kSmemBytesPerClock,
    .limits = "plans dense and batched GEMMs only (no kernel runs it yet)",
};

}  // namespace

const ArchSpec& arch_spec(Arch arch) { return arch == Arch::kSM100 ? kSm100 : kSm90; }

const ArchSpec& arch_spec(const std::string& name) {
  for (const ArchSpec* s : {&kSm90, &kSm100})
    if (name == s->name) return *s;
  throw Error("arch '" + name + "' is not sm90 or sm100");
}

}  // namespace tilecast::plan
