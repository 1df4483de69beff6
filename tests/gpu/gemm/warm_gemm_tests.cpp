// Compiles every kernel the GEMM GPU tests will launch into the JIT disk cache, in parallel, and
// prints each one's NVRTC time and resource report. Needs no GPU; the device script runs it
// before the tests so that none of them waits on a compile.
//   tilecast-warm-gemm-tests [threads] [small|layouts|grouped]   (small: only the sanitizer
//                                        subsets, small_cases() and grouped_small_cases(); layouts:
//                                        only layout_cases(); grouped: only test_gemm_grouped's)
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <tuple>

#include "api/warm.hpp"
#include "gemm_cases.hpp"
#include "grouped_cases.hpp"
#include "split_k_cases.hpp"
#include "swap_ab_cases.hpp"

int main(int argc, char** argv) {
  using namespace tilecast;
  const unsigned threads = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : std::thread::hardware_concurrency();
  std::vector<api::WarmItem> items;
  const bool only_small = argc > 2 && std::string(argv[2]) == "small";
  const bool only_layouts = argc > 2 && std::string(argv[2]) == "layouts";
  const bool only_grouped = argc > 2 && std::string(argv[2]) == "grouped";
  auto lists = only_small     ? std::vector<std::vector<test::GemmCase>>{test::small_cases()}
               : only_layouts ? std::vector<std::vector<test::GemmCase>>{test::layout_cases()}
               : only_grouped ? std::vector<std::vector<test::GemmCase>>{}
                              : std::vector<std::vector<test::GemmCase>>{
                                test::correctness_cases(), test::heuristic_cases(), test::companion_cases(),
                                test::small_cases(), test::graph_cases(), test::epilogue_cases(),
                                test::layout_cases(), test::multicast_worth_cases(),
                                {test::graph_other_buffers_case(), test::graph_unprepared_case()},
                                test::split_k_cases(), test::split_k_graph_cases(),
                                test::swap_ab_cases(), test::swap_ab_determinism_cases(),
                                test::swap_ab_graph_cases()};
  for (const auto& list : lists)
    for (const test::GemmCase& c : list) items.push_back({test::desc_of(c), c.config});
  auto grouped = only_layouts ? std::vector<std::vector<test::GroupedCase>>{}
                 : only_small ? std::vector<std::vector<test::GroupedCase>>{test::grouped_small_cases()}
                              : std::vector<std::vector<test::GroupedCase>>{
                                  test::grouped_correctness_cases(), test::grouped_heuristic_cases(),
                                  test::grouped_small_cases(), test::masked_graph_cases()};
  for (const auto& list : grouped)
    for (const test::GroupedCase& c : list) items.push_back({test::desc_of(c), c.config});
  // The problems GemmBadInput.* (test_gemm_bad_input.cpp) runs to show that legal views run:
  // m, n, k, BF16 out, with or without C.
  for (const auto& [m, n, k, has_c] : {std::tuple{256, 256, 512, false}, std::tuple{256, 128, 64, true},
                                       std::tuple{2048, 128, 1024, false}, std::tuple{512, 256, 256, false},
                                       std::tuple{128, 128, 64, false}})
    items.push_back({plan::dense_desc(m, n, k, 1, DType::kBF16, has_c), {}});
  try {
    // The split-K plans' reduce kernels (one per epilogue) come with them, built after the GEMMs'.
    std::vector<api::WarmKernel> reduces;
    const auto specs = api::kernels_to_warm(items, plan::DeviceFacts::h200_model(), &reduces);
    const auto kernels = api::warm_jit_cache(specs, threads, api::progress_on_stderr, reduces);
    int compiled = 0, spilling = 0;
    double seconds = 0;
    for (const api::WarmedKernel& k : kernels) {
      std::printf("%-8s %6.2f s  regs %3u  spill %4u B  stack %4u B  %s%s\n", k.from_cache ? "cached" : "compiled",
                  k.compile_seconds, k.registers, k.spill_bytes, k.stack_bytes, k.name.c_str(),
                  k.report_found ? "" : "  (no ptxas report: the driver's compute cache answered)");
      compiled += !k.from_cache;
      seconds += k.compile_seconds;
      spilling += k.spill_bytes > 0;
    }
    std::printf("%zu kernels: %d compiled (%.1f s of NVRTC, %.2f s each on average), %d with spills\n", kernels.size(),
                compiled, seconds, compiled ? seconds / compiled : 0.0, spilling);
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
