// Percentiles of per-round times, for the benchmark and the worker.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tilecast::comm::testing {

struct Latency {
  double p50_us = 0, p99_us = 0, max_us = 0;
};

// From %globaltimer stamps taken after each round (one rank's): the gaps between them, skipping
// the first `warmup` rounds.
inline Latency round_gaps(const std::vector<uint64_t>& stamps, size_t warmup) {
  std::vector<double> gaps;
  for (size_t i = std::max<size_t>(warmup, 1); i < stamps.size(); ++i) {
    gaps.push_back(static_cast<double>(stamps[i] - stamps[i - 1]) / 1000.0);
  }
  Latency l;
  if (gaps.empty()) return l;
  std::sort(gaps.begin(), gaps.end());
  l.p50_us = gaps[gaps.size() / 2];
  l.p99_us = gaps[std::min(gaps.size() - 1, gaps.size() * 99 / 100)];
  l.max_us = gaps.back();
  return l;
}

}  // namespace tilecast::comm::testing
