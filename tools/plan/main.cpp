// tilecast-plan: the plan tilecast::gemm would run for one problem, from the real planner: the
// chosen config, then the ranked alternatives with predicted time, waves and L2 -> SM bytes.
//
//   tilecast-plan M N K [--batch G] [--out bf16|fp32] [--with-c] [--config k=v,...] [--top N]
//
// Without a GPU (or with one) the device is the H200 model of DeviceFacts.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "tilecast/plan/gemm_plan.hpp"

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: tilecast-plan M N K [--batch G] [--out bf16|fp32] [--with-c] [--config k=v,...] [--top N]\n"
               "  --config takes GemmConfig's fields, e.g. block=128x256x64,stages=4,cluster=2x1,multicast_b=0\n");
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
  if (argc < 4) return usage();
  long long m = 0, n = 0, k = 0, batch = 1, top = 8;
  if (!positive(argv[1], m) || !positive(argv[2], n) || !positive(argv[3], k)) return usage();
  DType out = DType::kBF16;
  bool with_c = false;
  GemmConfig config;
  try {
    for (int i = 4; i < argc; ++i) {
      const std::string a = argv[i];
      const bool has_value = i + 1 < argc;
      if (a == "--batch" && has_value) {
        if (!positive(argv[++i], batch)) return usage();
      } else if (a == "--top" && has_value) {
        if (!positive(argv[++i], top)) return usage();
      } else if (a == "--out" && has_value) {
        const std::string v = argv[++i];
        if (v != "bf16" && v != "fp32") return usage();
        out = v == "fp32" ? DType::kFP32 : DType::kBF16;
      } else if (a == "--with-c") {
        with_c = true;
      } else if (a == "--config" && has_value) {
        config = parse_config(argv[++i]);
      } else {
        return usage();
      }
    }
    const plan::DeviceFacts facts = plan::DeviceFacts::h200_model();
    const plan::GemmDesc desc = plan::dense_desc(m, n, k, batch, out, with_c);
    std::printf("problem %lldx%lldx%lld batch %lld, out %s%s, config '%s', device %s (%u SMs)\n", m, n, k, batch,
                dtype_name(out), with_c ? " +C" : "", format_config(config).c_str(), facts.name.c_str(),
                facts.num_sms);
    std::fputs(plan::format_plans(plan::rank_plans(desc, facts, config), static_cast<size_t>(top)).c_str(), stdout);
  } catch (const Error& e) {
    std::fprintf(stderr, "tilecast-plan: %s\n", e.what());
    return 1;
  }
  return 0;
}
