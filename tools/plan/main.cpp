// tilecast-plan: the plan tilecast::gemm would run for one problem, from the real planner: the
// chosen config, then the ranked alternatives with predicted time, waves and L2 -> SM bytes.
//
//   tilecast-plan M N K [--batch G] [--out bf16|fp32] [--with-c] [--config k=v,...] [--top N]
//                       [--layout nt|nn|tn|tt]
//   tilecast-plan M N K --mgrouped G [--row-index]   M rows of G experts in all (tilecast/grouped.hpp)
//   tilecast-plan M N K --masked G --expected E     G experts of max_m = M rows, E expected
//   tilecast-plan M N K --kgrouped G [--with-c]      G groups over K columns in all (--with-c: accumulate)
//   [--device h200|h100-sxm|h100-pcie|h20|b200] [--arch sm90|sm100] [--facts]   anywhere on the line
//
// Without a GPU (or with one) the device is a model of DeviceFacts: the H200's unless --device
// names another, or --arch sm100 (plans only: the B200 model). --facts prints how its rates were
// derived. Last, for an unsplit static plan, what the L2 model (l2_reuse.hpp) says its walk reads
// of A and B from HBM: the figure to hold against Nsight Compute's dram__bytes_read.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "tilecast/plan/gemm_plan.hpp"
#include "tilecast/plan/grouped_surrogate.hpp"
#include "tilecast/plan/l2_reuse.hpp"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: tilecast-plan M N K [--batch G] [--out bf16|fp32] [--with-c] [--config k=v,...] [--top N]\n"
               "                     [--layout nt|nn|tn|tt]   (how A and B are stored; dense and batched)\n"
               "       tilecast-plan M N K --mgrouped G [--row-index] | --masked G --expected E | --kgrouped G\n"
               "  --config takes GemmConfig's fields, e.g. block=128x256x64,stages=4,cluster=2x1,multicast_b=0\n"
               "  grouped: M is all experts' rows (--mgrouped), max_m (--masked) or the rows of each result\n"
               "  (--kgrouped, K the groups' columns in all, --with-c accumulating); planned from sizes alone\n"
               "  --device h200|h100-sxm|h100-pcie|h20|b200 (a model; default h200), --arch sm90|sm100 (sm100: plans only,\n"
               "  on the b200 model unless --device says), --facts (how the device's rates were derived)\n");
  return 2;
}

bool positive(const char* text, long long& v) {
  char* end = nullptr;
  v = std::strtoll(text, &end, 10);
  return end && *end == '\0' && v > 0 && v < (1ll << 31);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tilecast;
  long long m = 0, n = 0, k = 0, batch = 1, top = 8, groups = 0, expected = 0;
  GemmType type = GemmType::kNormal;
  ContiguousLayout layout = ContiguousLayout::kOffsets;
  std::string device, arch;
  bool print_facts = false;
  int sizes = 0;
  DType out = DType::kBF16;
  bool with_c = false;
  GemmLayout operands = GemmLayout::kNT;
  GemmConfig config;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      const bool has_value = i + 1 < argc;
      if (a.empty() || a[0] != '-') {
        long long* size[] = {&m, &n, &k};
        if (sizes == 3 || !positive(argv[i], *size[sizes])) return usage();
        ++sizes;
      } else if (a == "--device" && has_value) {
        device = argv[++i];
      } else if (a == "--arch" && has_value) {
        arch = argv[++i];
      } else if (a == "--facts") {
        print_facts = true;
      } else if (a == "--batch" && has_value) {
        if (!positive(argv[++i], batch)) return usage();
      } else if ((a == "--mgrouped" || a == "--masked" || a == "--kgrouped") && has_value) {
        type = a == "--mgrouped" ? GemmType::kMGroupedContiguous
               : a == "--masked" ? GemmType::kMGroupedMasked
                                 : GemmType::kKGroupedContiguous;
        if (!positive(argv[++i], groups)) return usage();
      } else if (a == "--expected" && has_value) {
        if (!positive(argv[++i], expected)) return usage();
      } else if (a == "--row-index") {
        layout = ContiguousLayout::kRowIndex;
      } else if (a == "--top" && has_value) {
        if (!positive(argv[++i], top)) return usage();
      } else if (a == "--out" && has_value) {
        const std::string v = argv[++i];
        if (v != "bf16" && v != "fp32") return usage();
        out = v == "fp32" ? DType::kFP32 : DType::kBF16;
      } else if (a == "--with-c") {
        with_c = true;
      } else if (a == "--layout" && has_value) {
        const std::string v = argv[++i];
        bool known = false;
        for (GemmLayout l : {GemmLayout::kNT, GemmLayout::kNN, GemmLayout::kTN, GemmLayout::kTT})
          if (v == layout_name(l)) operands = l, known = true;
        if (!known) return usage();
      } else if (a == "--config" && has_value) {
        config = parse_config(argv[++i]);
      } else {
        return usage();
      }
    }
    if (sizes != 3) return usage();
    const plan::ArchSpec* wanted = arch.empty() ? nullptr : &plan::arch_spec(arch);
    if (device.empty()) device = wanted && wanted->arch == plan::Arch::kSM100 ? "b200" : "h200";
    const plan::DeviceFacts facts = plan::device_model(device);
    if (wanted && wanted->arch != facts.arch)
      throw Error("--arch " + arch + " does not match --device " + device + ", which is " +
                  plan::arch_spec(facts.arch).name);
    if (print_facts) std::fputs(plan::describe_facts(facts).c_str(), stdout);
    plan::GemmDesc desc;
    switch (type) {
      case GemmType::kMGroupedContiguous:
        desc = plan::mgrouped_contiguous_desc(layout, m, n, k, groups, out);
        std::printf("m-grouped contiguous (%s): %lld rows of %lld experts, n %lld, k %lld", 
                    layout == ContiguousLayout::kOffsets ? "offsets" : "row index", m, groups, n, k);
        break;
      case GemmType::kMGroupedMasked:
        if (expected == 0) return usage();
        desc = plan::mgrouped_masked_desc(m, n, k, groups, expected, out);
        std::printf("m-grouped masked: %lld experts of max_m %lld, %lld rows expected, n %lld, k %lld", groups, m,
                    expected, n, k);
        break;
      case GemmType::kKGroupedContiguous:
        desc = plan::kgrouped_desc(m, n, k, groups, out, with_c);
        std::printf("k-grouped: %lld groups of %lldx%lld over k %lld%s", groups, m, n, k, with_c ? ", accumulating" : "");
        break;
      default:
        desc = plan::dense_desc(m, n, k, batch, out, with_c, operands);
        std::printf("problem %lldx%lldx%lld batch %lld", m, n, k, batch);
        if (operands != GemmLayout::kNT) std::printf(" layout %s", layout_name(operands));
    }
    // The rows as the least TMA takes them: tight rows padded to 16 bytes.
    plan::assume_padded_rows(desc);
    std::printf(", out %s%s, config '%s', device %s (%u SMs, %s%s)\n", dtype_name(out),
                with_c && type == GemmType::kNormal ? " +C" : "", format_config(config).c_str(), facts.name.c_str(),
                facts.num_sms, plan::arch_spec(facts.arch).name,
                plan::arch_spec(facts.arch).runs_kernels ? "" : ": plans only, no kernel");
    const std::vector<plan::GemmPlan> ranked = plan::rank_plans(desc, facts, config);
    std::fputs(plan::format_plans(ranked, static_cast<size_t>(top)).c_str(), stdout);
    const plan::GemmPlan& chosen = ranked.front();
    if (chosen.k_splits == 1 && !chosen.companion) {
      // Played on the planner's surrogate of the group data, as the band was chosen.
      const plan::PlanningProblem played = plan::planning_problem(desc);
      GemmProblem walked = played.problem();
      if (chosen.main.kernel.swap_ab) std::swap(walked.m, walked.n);
      const double once = plan::operand_hbm_bytes(walked, chosen.schedule, chosen.main.clusters, uint64_t{1} << 62);
      const double read = plan::operand_hbm_bytes(walked, chosen.schedule, chosen.main.clusters, facts.l2_bytes,
                                                  chosen.main.kernel.k_serpentine);
      std::printf("L2 model: the walk reads %.3f GB of A and B from HBM (each once: %.3f GB; band %u, K %s)\n",
                  read / 1e9, once / 1e9, chosen.schedule.swizzle,
                  chosen.main.kernel.k_serpentine ? "serpentine" : "forward");
    }
  } catch (const Error& e) {
    std::fprintf(stderr, "tilecast-plan: %s\n", e.what());
    return 1;
  }
  return 0;
}
