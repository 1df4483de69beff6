#include "gemm_config.hpp"

namespace tilecast::bench {

std::string describe(const GemmConfig& c) {
  const std::string text = format_config(c);
  return text.empty() ? "auto" : text;
}

std::vector<GemmConfig> cluster_compare_configs(const GemmConfig& base) {
  std::vector<GemmConfig> out;
  const unsigned shapes[][2] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {4, 1}, {1, 4}};
  for (const auto& s : shapes) {
    GemmConfig c = base;
    c.cluster_m = s[0];
    c.cluster_n = s[1];
    c.companion = 0;
    out.push_back(c);
  }
  for (const auto& s : shapes) {
    if (s[0] * s[1] != 4) continue;
    GemmConfig c = base;
    c.cluster_m = s[0];
    c.cluster_n = s[1];
    c.companion = 1;
    out.push_back(c);
  }
  return out;
}

std::vector<GemmConfig> split_compare_configs(const GemmConfig& base) {
  std::vector<GemmConfig> out{base};
  GemmConfig off = base;
  off.k_splits = 1;
  out.push_back(off);
  for (uint32_t s : kSplitCompare) {
    GemmConfig c = base;
    c.k_splits = s;
    c.companion = 0;
    out.push_back(c);
  }
  return out;
}

}  // namespace tilecast::bench
