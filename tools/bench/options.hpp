// tilecast-bench's command line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "suites.hpp"
#include "sweep.hpp"
#include "tilecast/gemm.hpp"

namespace tilecast::bench {

struct Options {
  std::vector<std::string> suites;     // empty: "default" unless shapes were given
  std::vector<BenchProblem> shapes;    // --shape
  GemmConfig config;                   // --cluster, --config
  bool cluster_compare = false;
  bool split_compare = false;
  bool sweep = false;                       // --sweep: every config the planner can emit (sweep.hpp)
  size_t sweep_limit = kDefaultSweepLimit;  // --sweep-limit: configs per problem, 0: all
  DType out = DType::kBF16;
  bool out_given = false;  // --out: else each suite's own (bf16; k-grouped suites fp32)
  bool with_c = false;
  uint32_t row_bytes = kLeastRowBytes;  // --row-bytes: A's and B's rows padded to this many bytes
  int warmup = 10, iters = 50;
  double min_ms = 0;  // --min-ms: more rounds where a round is short, until the loop lasts this long
  bool json_rounds = false;  // --json-rounds: each timed run's time in the JSON, in round order
  bool balanced_order = true;  // the timed rounds in a Williams design (interleave.hpp); --fixed-order: not
  size_t flush_bytes = size_t{256} << 20;
  bool flush_read = false;  // --flush-read: flush by reading the buffer, not writing it
  int calls_per_run = 1;  // --calls-per-run: back-to-back calls between a timed run's events
  std::string json_path, markdown_path;
  bool plan_only = false, show_plan = false;
  double energy_s = 2.0;  // --suite mcast, --sustained: seconds of the sustained loop per config (0: none)
  bool ncu_pass = false;  // --ncu-pass: each config once for Nsight Compute (multicast_worth.hpp)
  bool sustained = false;  // --sustained: the --shape and --suite rows timed and metered as --suite mcast's
  double peak_tflops = 0, peak_tb_per_s = 0;  // 0: DeviceFacts
  uint64_t seed = 0;
  bool seed_given = false;
  int device = 0;
  bool help = false;
};

// Throws std::invalid_argument with a message for the user.
Options parse_options(int argc, char** argv);
std::string usage();

// The problems the options select, in order, with --out and --with-c applied (apply_epilogue).
std::vector<BenchProblem> selected_problems(const Options& o);

}  // namespace tilecast::bench
