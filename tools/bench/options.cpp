#include "options.hpp"

#include <sstream>
#include <stdexcept>

#include "gemm_config.hpp"

namespace tilecast::bench {
namespace {

// More configs than the planner can emit for any problem (84 tile x cluster pairs, multicast and
// companion variants, 10 split counts): a larger limit is a typo.
constexpr long long kMaxSweepLimit = 100000;

long long to_int(const std::string& opt, const std::string& v, long long lo, long long hi) {
  size_t used = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &used, 0);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || v.empty() || x < lo || x > hi)
    throw std::invalid_argument(opt + " wants an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                                "], got '" + v + "'");
  return x;
}

double to_double(const std::string& opt, const std::string& v) {
  size_t used = 0;
  double x = 0;
  try {
    x = std::stod(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || !(x > 0)) throw std::invalid_argument(opt + " wants a positive number, got '" + v + "'");
  return x;
}

}  // namespace

std::string usage() {
  return R"(usage: tilecast-bench [options]

Times tilecast::gemm against cuBLASLt on MISSION.md's shapes (same run, same L2 flush policy),
checks every tilecast result against a cuBLASLt reference, and reports TFLOPS, x cuBLAS and the
fraction of the roofline. Without a GPU (or with --plan-only) it prints each problem's plan and
traffic model and exits 0.

problems
  --suite a,b,...     dense (8192^3), m4096 and m128 (DeepGEMM's normal (n,k) list), mgrouped,
                      masked, kgrouped (weight gradients, fp32, accumulating), deepseek-v3 (one
                      MoE layer: prefill, decode, weight gradients), square, odd, splitk
                      (issue #12's small-M rows), swapab (m = 1..64, for swap_ab); nn, tn, tt
                      (8192^3 and the m = 4096 list with A and B stored in those layouts); default
                      (= dense,m4096,m128,odd) or all. Default: default, or nothing when --shape
                      is given. mcast: what multicast is worth (three shapes x every cluster,
                      multicast off, companion; flushed time, sustained clock and energy, the
                      traffic model; tools/bench/multicast_worth.hpp)
  --shape m,n,k[,b]   one more problem (b > 1: batched); repeatable
  --out bf16|fp32     output dtype (default: each suite's, bf16 but for k-grouped fp32)
  --with-c            D = A * B^T + C (k-grouped: accumulate; m-grouped and masked: no C)
  --row-bytes N       pad each stored row of A and B to a multiple of N bytes: 16 (default, the
                      least TMA takes), 32, 64 or 128 (whole L2 lines); labels say "rowsN"

tilecast configuration (forwarded to tilecast::GemmConfig; unset fields: the heuristic's)
  --cluster MxN       CTAs along M x along N: 1x1, 2x1, 1x2, 2x2, 4x1, 1x4
  --config k=v,...    block=BMxBNxBK, block_m, block_n, block_k, stages, cluster=MxN, cluster_m,
                      cluster_n, multicast_a, multicast_b (0/1), swizzle, max_sms, companion (0/1),
                      k_splits, swap_ab (0/1; 1: rows with m > 64 are marked unavailable),
                      fused_reduce (0/1: split-K slices summed by the reduce kernel or in the GEMM),
                      cluster_reduce (0/1: 1 sums them across a cluster of k_splits CTAs),
                      split_columns (0/1), pingpong (0/1: the consumer warpgroups take whole
                      tiles in turn, each epilogue under the other's main loop), k_serpentine
                      (0/1: odd waves walk K backwards, from what the wave before left in L2)
  --split-compare     one row each for the planner's choice, split-K off (k_splits=1) and
                      forced to 2, 3, 4, 8 and 16 slices, for each problem
  --cluster-compare   one row per cluster shape (1x1, 2x1, 1x2, 2x2, 4x1, 1x4, and the clusters
                      of 4 with a companion launch) for each problem
  --sweep             time every config the planner can emit for each problem (tile shapes,
                      cluster shapes, multicast on and off, split-K counts, the companion;
                      fields --config sets stay fixed) beside "auto", check each, and report
                      the heuristic's pick against the best measured; with --plan-only: list them
  --sweep-limit N     configs per problem, the model's cheapest first, the cheapest of each
                      kind (tile height, swapped or column-split or neither, how K slices
                      are summed) always among them (default )" +
         std::to_string(kDefaultSweepLimit) + R"(; 0: all)

timing
  --warmup N          warm-up iterations (default 10)
  --iters N           timed iterations, median reported (default 50); cuBLAS and every
                      tilecast config of a problem run in turn within one loop, in the balanced
                      order for whole periods of it (N rounded up)
  --min-ms X          more rounds where the rounds are short: as many as make the timed loop
                      last X ms or more, as the warm-up rounds took (default 0: --iters alone).
                      The sweeps use 250: at 28 rounds auto ran 5.6-7.1% behind its own forced
                      twin on 128x576x7168 in two loops, at 210 rounds 0.8-1.3%
  --balanced-order    order the rounds of the timed loop so that every function follows every
                      other one equally often (a Williams design): the default. In the same
                      order every round, auto always ran right after the cuBLAS variants and
                      lost 2-6% to its own forced twin on small rows (2026-12-01-h200-order.md)
  --fixed-order       the same order every round (cuBLAS variants, auto, the rest), as before
  --flush-mb N        L2 flush buffer written before every iteration (default 256; 0: none)
  --flush-read        flush by reading the buffer (a cuBLAS sum over it) instead of writing it:
                      L2 then holds clean lines, and the timed call does not pay for writing
                      the flush's dirty lines back to HBM as its reads evict them
  --calls-per-run K   each timed run enqueues K back-to-back calls of the same function (no flush
                      between them) and counts the time per call (default 1). What a chain of
                      calls costs, launch gaps included; the calls after the first of a run find
                      in L2 whatever of their operands fits there
  --peak-tflops X     roofline compute peak (default: DeviceFacts, 989)
  --peak-tbps X       roofline memory bandwidth in TB/s (default: DeviceFacts, 4.2)
  --energy-s X        --suite mcast, --sustained: seconds of back-to-back calls per config for
                      NVML's energy counter (default 2; 0: no energy loop)
  --ncu-pass          --suite mcast or --shape: each config (and cuBLAS) once, after a marker
                      kernel, inside an NVTX range, for scripts/multicast_counters.sh; no timing
  --sustained         the --shape and --suite problems (any kind, with --config) measured as
                      --suite mcast measures its configs: the flushed median, then --energy-s
                      seconds of back-to-back calls for the sustained clock and NVML joules per
                      GEMM, each beside cuBLAS's fastest variant (at the power cap the energy per
                      GEMM sets the speed)
  --seed N            input seed (default: fresh; TILECAST_TEST_SEED also works)
  --device N          CUDA device (default 0)

output
  --json FILE         every row, the machine facts and the command line as JSON
  --json-rounds       the JSON also holds each timed run's time, in round order, with the
                      function's index in the loop and the labels' seed
                      (scripts/bench_rounds.py: each run's neighbours and place)
  --results-md FILE   a markdown table for bench/results/
  --plan-only         print each problem's plan only (the planner's choice and its ranked
                      alternatives), even with a GPU
  --show-plan         with a GPU, print each problem's plan before its rows

(Filling the JIT cache ahead of a run is tilecast-warm's job: tilecast-warm --help.)
  --help
)";
}

Options parse_options(int argc, char** argv) {
  Options o;
  std::string config_text;  // --cluster and --config in order, the later winning
  bool sweep_limit_given = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--suite") {
      std::stringstream ss(next());
      for (std::string s; std::getline(ss, s, ',');)
        if (!s.empty()) {
          make_suite(s);  // throws for unknown names, before any work
          o.suites.push_back(s);
        }
    } else if (a == "--shape") {
      o.shapes.push_back(parse_shape(next()));
    } else if (a == "--out") {
      const std::string v = next();
      if (v == "bf16") o.out = DType::kBF16;
      else if (v == "fp32") o.out = DType::kFP32;
      else throw std::invalid_argument("--out wants bf16 or fp32");
      o.out_given = true;
    } else if (a == "--with-c") {
      o.with_c = true;
    } else if (a == "--cluster") {
      // Appended in two steps: GCC 12 warns (-Wrestrict, falsely) on "," + a temporary string.
      (config_text += ",cluster=") += next();
    } else if (a == "--config") {
      (config_text += ",") += next();
    } else if (a == "--cluster-compare") {
      o.cluster_compare = true;
    } else if (a == "--split-compare") {
      o.split_compare = true;
    } else if (a == "--sweep") {
      o.sweep = true;
    } else if (a == "--sweep-limit") {
      o.sweep_limit = static_cast<size_t>(to_int(a, next(), 0, kMaxSweepLimit));
      sweep_limit_given = true;
    } else if (a == "--warmup") {
      o.warmup = static_cast<int>(to_int(a, next(), 0, 100000));
    } else if (a == "--iters") {
      o.iters = static_cast<int>(to_int(a, next(), 1, 100000));
    } else if (a == "--min-ms") {
      o.min_ms = static_cast<double>(to_int(a, next(), 0, 60000));
    } else if (a == "--balanced-order") {
      o.balanced_order = true;
    } else if (a == "--fixed-order") {
      o.balanced_order = false;
    } else if (a == "--flush-mb") {
      o.flush_bytes = static_cast<size_t>(to_int(a, next(), 0, 1 << 16)) << 20;
    } else if (a == "--flush-read") {
      o.flush_read = true;
    } else if (a == "--calls-per-run") {
      o.calls_per_run = static_cast<int>(to_int(a, next(), 1, 10000));
    } else if (a == "--peak-tflops") {
      o.peak_tflops = to_double(a, next());
    } else if (a == "--peak-tbps") {
      o.peak_tb_per_s = to_double(a, next());
    } else if (a == "--energy-s") {
      const std::string v = next();
      o.energy_s = v == "0" ? 0.0 : to_double(a, v);
    } else if (a == "--ncu-pass") {
      o.ncu_pass = true;
    } else if (a == "--sustained") {
      o.sustained = true;
    } else if (a == "--row-bytes") {
      const int64_t v = to_int(a, next(), 16, 128);
      if (v != 16 && v != 32 && v != 64 && v != 128) throw std::invalid_argument("--row-bytes takes 16, 32, 64 or 128");
      o.row_bytes = static_cast<uint32_t>(v);
    } else if (a == "--seed") {
      o.seed = static_cast<uint64_t>(to_int(a, next(), 0, INT64_MAX));
      o.seed_given = true;
    } else if (a == "--device") {
      o.device = static_cast<int>(to_int(a, next(), 0, 63));
    } else if (a == "--json") {
      o.json_path = next();
    } else if (a == "--json-rounds") {
      o.json_rounds = true;
    } else if (a == "--results-md") {
      o.markdown_path = next();
    } else if (a == "--plan-only") {
      o.plan_only = true;
    } else if (a == "--show-plan") {
      o.show_plan = true;
    } else {
      throw std::invalid_argument("unknown option '" + a + "' (see --help)");
    }
  }
  if (o.sweep && (o.cluster_compare || o.split_compare))
    throw std::invalid_argument("--sweep times every config already: leave out --cluster-compare and --split-compare");
  if (sweep_limit_given && !o.sweep) throw std::invalid_argument("--sweep-limit needs --sweep");
  try {
    o.config = parse_config(config_text);
  } catch (const Error& e) {
    throw std::invalid_argument(e.what());
  }
  return o;
}

std::vector<BenchProblem> selected_problems(const Options& o) {
  std::vector<std::string> suites = o.suites;
  if (suites.empty() && o.shapes.empty()) suites.push_back("default");
  std::vector<BenchProblem> out;
  for (const std::string& s : suites)
    for (BenchProblem& p : make_suite(s)) out.push_back(std::move(p));
  for (const BenchProblem& p : o.shapes) out.push_back(p);
  for (BenchProblem& p : out) {
    apply_epilogue(p, o.out_given ? &o.out : nullptr, o.with_c);
    p.row_bytes = o.row_bytes;
  }
  return out;
}

}  // namespace tilecast::bench
