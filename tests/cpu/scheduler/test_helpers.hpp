// What the scheduler tests share: small dense and grouped problems, a 128x128x64 config, and
// lookups in a list of violations.
#pragma once

#include <string>
#include <vector>

#include "tilecast/device/scheduler/tile_scheduler.cuh"

namespace tilecast::test {

inline GemmProblem dense(uint32_t m, uint32_t n, uint32_t k) {
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  return p;
}

// A grouped problem over host group data (which must outlive it).
inline GemmProblem grouped(GemmType type, uint32_t m, uint32_t n, uint32_t k, uint32_t groups,
                           const std::vector<int32_t>& data, ContiguousLayout layout = ContiguousLayout::kRowIndex) {
  GemmProblem p = dense(m, n, k);
  p.type = type;
  p.contiguous_layout = layout;
  p.num_groups = groups;
  p.group_data = data.data();
  return p;
}

// Calls f(work) for every valid tile every CTA rank of a cluster walks, unit by unit.
template <class F>
void for_each_valid_work(const GemmProblem& p, const TileConfig& c, F&& f) {
  for (uint32_t rank = 0; rank < c.cluster.size(); ++rank) {
    TileScheduler s(p, c, rank);
    for (uint32_t unit = 0; s.seek(unit); ++unit)
      for (uint32_t step = 0; step < s.steps_per_unit(); ++step) {
        const TileWork w = s.work(step);
        if (w.valid) f(w);
      }
  }
}

inline TileConfig config(uint32_t cluster_m, uint32_t cluster_n) {
  TileConfig c;
  c.block_m = 128;
  c.block_n = 128;
  c.block_k = 64;
  c.cluster = {cluster_m, cluster_n};
  return c;
}

inline bool mentions(const std::vector<std::string>& violations, const std::string& what) {
  for (const std::string& v : violations)
    if (v.find(what) != std::string::npos) return true;
  return false;
}

// The violations one a line, for a failed expectation's message.
inline std::string listing(const std::vector<std::string>& violations) {
  std::string s;
  for (const std::string& v : violations) s += v + "\n";
  return s;
}

}  // namespace tilecast::test
