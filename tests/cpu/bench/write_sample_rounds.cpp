// Writes the JSON a `tilecast-bench --sweep --json-rounds` run would, for two made-up loops (5
// functions, odd: the design's period is 10 rounds; 14, even), each with its labels' seed, into
// the file given. Each run's time encodes where interleave.hpp put it: place * 1e6 + (the
// function before + 1) * 1e3 + (the function after + 1), 0 past the loop's ends.
// test_bench_rounds.py reads it with scripts/bench_rounds.py, which must rebuild the same order.
#include <cstdio>
#include <string>
#include <vector>

#include "interleave.hpp"
#include "report.hpp"

using namespace tilecast::bench;

namespace {

// Function `fn`'s runs, in round order, as the timing loop lays them out.
std::vector<double> encoded_runs(size_t fn, size_t n, size_t rounds, uint64_t relabel) {
  std::vector<double> us;
  for (size_t r = 0; r < rounds; ++r) {
    const size_t pos = interleaved_position(r, fn, n, true, relabel);
    const size_t run = r * n + pos, runs = rounds * n;
    const auto at = [&](size_t k) { return interleaved_function(k / n, k % n, n, true, relabel); };
    const double before = run ? static_cast<double>(at(run - 1) + 1) : 0;
    const double after = run + 1 < runs ? static_cast<double>(at(run + 1) + 1) : 0;
    us.push_back(static_cast<double>(pos) * 1e6 + before * 1e3 + after);
  }
  return us;
}

TimingStats timing(size_t fn, size_t n, size_t rounds, uint64_t relabel) {
  TimingStats t;
  t.rounds_us = encoded_runs(fn, n, rounds, relabel);
  t.iters = static_cast<int>(rounds);
  t.median_us = t.rounds_us.front();
  t.loop_index = static_cast<uint32_t>(fn);
  t.loop_functions = static_cast<uint32_t>(n);
  t.balanced = true;
  t.relabel = relabel;
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_sample_rounds FILE\n");
    return 2;
  }
  std::vector<Row> rows;
  struct Loop {
    BenchProblem problem;
    size_t functions, rounds;
    uint64_t relabel;
  };
  BenchProblem odd, even;
  odd.suite = even.suite = "splitk";
  odd.m = 128, odd.n = 576, odd.k = 7168;
  even.m = 333, even.n = 2112, even.k = 7168;
  // cuBLAS is function 0, auto 1, the sweep's configs 2.. (the first of them the pick).
  for (const Loop& l : {Loop{odd, 5, 30, 0x9e3779b97f4a7c15ull}, Loop{even, 14, 42, 16433245705317493293ull}}) {
    for (size_t fn = 1; fn < l.functions; ++fn) {
      Row r;
      r.problem = l.problem;
      r.config = fn == 1 ? "auto" : "block_m=64,block_n=" + std::to_string(32 * fn) + ",k_splits=1";
      r.sweep = fn > 1;
      r.heuristic_pick = fn == 2;
      r.sweep_rank = fn - 1;
      r.tilecast_status = "ok";
      r.tilecast.ran = r.cublas.ran = true;
      r.tilecast.t = timing(fn, l.functions, l.rounds, l.relabel);
      r.cublas.t = timing(0, l.functions, l.rounds, l.relabel);
      r.cublas_variant = "cublasLt";
      rows.push_back(r);
    }
  }
  RunInfo info;
  info.json_rounds = true;
  return write_json(argv[1], info, rows, {}) ? 0 : 1;
}
