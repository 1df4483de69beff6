// tilecast-plan: for one problem, one row per cluster shape of what the scheduler would do:
// clusters, SMs, waves, tail, L2 -> SM bytes with and without multicast, and the simulator's
// verdict on the plan.
//
//   tilecast-plan M N K [--batch G] [--block BMxBNxBK] [--max-sms S]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tilecast/plan/traffic.hpp"

namespace {

int usage() {
  std::fprintf(stderr, "usage: tilecast-plan M N K [--batch G] [--block BMxBNxBK] [--max-sms S]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace tilecast;
  if (argc < 4) return usage();
  GemmProblem p;
  p.m = static_cast<uint32_t>(std::strtoul(argv[1], nullptr, 10));
  p.n = static_cast<uint32_t>(std::strtoul(argv[2], nullptr, 10));
  p.k = static_cast<uint32_t>(std::strtoul(argv[3], nullptr, 10));
  uint32_t bm = 128, bn = 256, bk = 64, max_sms = 0;
  for (int i = 4; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--batch") && i + 1 < argc) {
      p.type = GemmType::kBatched;
      p.num_groups = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else if (!std::strcmp(argv[i], "--block") && i + 1 < argc) {
      if (std::sscanf(argv[++i], "%ux%ux%u", &bm, &bn, &bk) != 3) return usage();
    } else if (!std::strcmp(argv[i], "--max-sms") && i + 1 < argc) {
      max_sms = static_cast<uint32_t>(std::strtoul(argv[++i], nullptr, 10));
    } else {
      return usage();
    }
  }
  if (p.m == 0 || p.n == 0 || p.k == 0 || p.num_groups == 0 || bm == 0 || bn == 0 || bk == 0) {
    std::fprintf(stderr, "tilecast-plan: sizes, batch and blocks must be positive\n");
    return 2;
  }
  const plan::DeviceFacts facts = plan::DeviceFacts::h200_model();
  std::printf("problem %ux%ux%u batch %u, block %ux%ux%u, device %s (%u SMs)\n", p.m, p.n, p.k, p.num_groups, bm, bn,
              bk, facts.name.c_str(), facts.num_sms);
  const auto rows = plan::traffic_by_cluster_shape(p, facts, bm, bn, bk, max_sms);
  std::fputs(plan::format_traffic(rows).c_str(), stdout);
  return 0;
}
