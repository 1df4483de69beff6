// NVRTC compiles for sm_90a through the embedded device headers, and the resource report it
// yields.
#include <gtest/gtest.h>

#include <algorithm>

#include "jit/compiler.hpp"
#include "jit/embedded_headers.hpp"
#include "jit_test_util.hpp"
#include "tilecast/types.hpp"

namespace tilecast::jit {
namespace {

using test::Contains;

// Includes tilecast device headers (embedded) and CCCL (from the toolkit); 1 KiB static smem.
KernelSpec ring_kernel() {
  KernelSpec spec;
  spec.source = R"(
#include "tilecast/device/common.cuh"
#include "tilecast/device/pipeline/pipeline_state.cuh"
#include <cuda/ptx>

namespace jit_test {
template <tilecast::uint32_t kStages>
__global__ void ring(tilecast::uint32_t* out, tilecast::uint32_t steps) {
  __shared__ tilecast::uint32_t scratch[256];
  auto state = tilecast::producer_start_state<kStages>();
  for (tilecast::uint32_t i = 0; i < steps; ++i) state.advance();
  scratch[threadIdx.x % 256] = state.stage * 2 + state.phase + tilecast::ceil_div(steps, kStages);
  __syncthreads();
  out[threadIdx.x] = scratch[(threadIdx.x + 1) % 256] + cuda::ptx::get_sreg_cluster_ctarank();
}
}  // namespace jit_test
)";
  spec.name_expression = "jit_test::ring<4>";
  return spec;
}

TEST(JitCompiler, EmbeddedHeadersAreRelativeAndSorted) {
  const auto headers = embedded_headers();
  ASSERT_FALSE(headers.empty());
  bool has_common = false;
  for (const auto& h : headers) {
    EXPECT_EQ(h.name.rfind("tilecast/device/", 0), 0u) << h.name;
    EXPECT_FALSE(h.content.empty()) << h.name;
    has_common |= h.name == "tilecast/device/common.cuh";
  }
  EXPECT_TRUE(has_common);
  EXPECT_TRUE(std::is_sorted(headers.begin(), headers.end(),
                             [](const auto& a, const auto& b) { return a.name < b.name; }));
}

TEST(JitCompiler, CompilesThroughEmbeddedHeadersForSm90a) {
  const Compiler compiler;
  const CompiledKernel k = compiler.compile(ring_kernel());
  EXPECT_EQ(k.lowered_name, "_ZN8jit_test4ringILj4EEEvPjj");
  EXPECT_GT(k.cubin.size(), 1000u);
  EXPECT_EQ(k.cubin.substr(0, 4), "\x7f" "ELF");
  EXPECT_TRUE(Contains(k.log, "for 'sm_90a'"));
  EXPECT_TRUE(k.report.found);
  EXPECT_GE(k.report.registers, 4);
  EXPECT_LE(k.report.registers, 64);
  EXPECT_EQ(k.report.shared_bytes, 1024);
  EXPECT_EQ(k.report.barriers, 1);
  EXPECT_FALSE(k.report.has_spills());
  EXPECT_FALSE(k.report.uses_local_memory());
  std::printf("ring<4>: %s\n", k.report.to_string().c_str());
}

TEST(JitCompiler, ToolkitHeadersAreReachable) {
  KernelSpec spec;
  spec.source = R"(
#include <cuda_bf16.h>
__global__ void scale(__nv_bfloat16* x) { x[threadIdx.x] = x[threadIdx.x] * __float2bfloat16(2.0f); }
)";
  spec.name_expression = "scale";
  const CompiledKernel k = Compiler().compile(spec);
  EXPECT_TRUE(k.report.found);
}

TEST(JitCompiler, LargeLocalArrayShowsInTheReport) {
  KernelSpec spec;
  spec.source = R"(
__global__ void local_array(float* out, int n) {
  float big[4096];
  for (int i = 0; i < 4096; ++i) big[i] = out[i * n];
  out[threadIdx.x] = big[(threadIdx.x * 7) % 4096];
}
)";
  spec.name_expression = "local_array";
  const CompiledKernel k = Compiler().compile(spec);
  EXPECT_GE(k.report.stack_frame_bytes, 16384);
  EXPECT_TRUE(k.report.uses_local_memory());
}

TEST(JitCompiler, RegisterPressureShowsAsSpills) {
  // 96 live accumulators under a 32-register cap (1024 threads, 2 CTAs per SM).
  KernelSpec spec;
  spec.source = R"(
__global__ void __launch_bounds__(1024, 2) spill(float* out, const float* in) {
  float acc[96];
#pragma unroll
  for (int i = 0; i < 96; ++i) acc[i] = in[i * 1024 + threadIdx.x];
#pragma unroll 1
  for (int k = 0; k < 8; ++k) {
#pragma unroll
    for (int i = 0; i < 96; ++i) acc[i] = acc[i] * acc[(i + 1) % 96] + in[k];
  }
#pragma unroll
  for (int i = 0; i < 96; ++i) out[i * 1024 + threadIdx.x] = acc[i];
}
)";
  spec.name_expression = "spill";
  const CompiledKernel k = Compiler().compile(spec);
  EXPECT_TRUE(k.report.has_spills()) << k.log;
  EXPECT_GT(k.report.spill_store_bytes, 0);
  EXPECT_GT(k.report.spill_load_bytes, 0);
  EXPECT_LE(k.report.registers, 32);
  EXPECT_TRUE(Contains(k.log, "Registers are spilled"));  // --warn-on-spills is on
}

TEST(JitCompiler, CompileErrorCarriesLogAndSource) {
  KernelSpec spec;
  spec.source = "// first line of the generated source\n"
                "__global__ void broken(int* p) { p[0] = undeclared_thing; }\n";
  spec.name_expression = "broken";
  try {
    Compiler().compile(spec);
    FAIL() << "expected a compile error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_TRUE(Contains(what, "NVRTC could not compile broken"));
    EXPECT_TRUE(Contains(what, "undeclared_thing"));
    EXPECT_TRUE(Contains(what, "error"));
    EXPECT_TRUE(Contains(what, "1| // first line of the generated source"));
  }
}

TEST(JitCompiler, MissingHeaderIsACompileError) {
  KernelSpec spec;
  spec.source = "#include \"tilecast/device/no_such_header.cuh\"\n__global__ void k() {}\n";
  spec.name_expression = "k";
  try {
    Compiler().compile(spec);
    FAIL() << "expected a compile error";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(e.what(), "no_such_header.cuh"));
  }
}

TEST(JitCompiler, OptionsNameTheTargetAndTheReport) {
  const Compiler compiler;
  KernelSpec spec = ring_kernel();
  spec.options = {"-DTC_TEST=1"};
  const auto opts = compiler.options(spec);
  for (const char* o : {"-arch=sm_90a", "-std=c++20", "-default-device", "--ptxas-options=-v",
                        "--ptxas-options=--warn-on-spills", "-DTC_TEST=1"}) {
    EXPECT_NE(std::find(opts.begin(), opts.end(), o), opts.end()) << o;
  }
  EXPECT_NE(std::find(opts.begin(), opts.end(), "-I" + compiler.cccl_include().string()),
            opts.end());
  EXPECT_TRUE(Contains(compiler.toolchain(), "nvrtc 13."));
  EXPECT_TRUE(Contains(compiler.toolchain(), "cccl "));
}

TEST(JitCompiler, KeyFollowsSourceOptionsNameAndHeaders) {
  const Compiler compiler;
  const KernelSpec base = ring_kernel();
  const Hash128 key = compiler.cache_key(base);
  EXPECT_EQ(key, compiler.cache_key(base));

  KernelSpec source = base;
  source.source += "\n// one more comment\n";
  EXPECT_NE(compiler.cache_key(source), key);

  KernelSpec options = base;
  options.options.push_back("-lineinfo");
  EXPECT_NE(compiler.cache_key(options), key);

  KernelSpec name = base;
  name.name_expression = "jit_test::ring<8>";
  EXPECT_NE(compiler.cache_key(name), key);

  std::vector<SourceHeader> headers = compiler.headers();
  ASSERT_FALSE(headers.empty());
  headers.back().content += "\n// a header changed\n";
  const Compiler changed(headers, compiler.cccl_include());
  EXPECT_NE(changed.cache_key(base), key);

  const Compiler same(compiler.headers(), compiler.cccl_include());
  EXPECT_EQ(same.cache_key(base), key);
}

TEST(JitCompiler, ExtraOptionsFromTheEnvironmentJoinTheOptionsAndTheKey) {
  const Compiler compiler;
  const KernelSpec spec = ring_kernel();
  const Hash128 plain = compiler.cache_key(spec);
  test::ScopedEnv env("TILECAST_JIT_OPTIONS", " -DTC_EXPERIMENT=1  -DTC_OTHER ");
  const auto opts = compiler.options(spec);
  for (const char* o : {"-DTC_EXPERIMENT=1", "-DTC_OTHER"})
    EXPECT_NE(std::find(opts.begin(), opts.end(), o), opts.end()) << o;
  EXPECT_EQ(std::count(opts.begin(), opts.end(), ""), 0) << "spaces make no empty options";
  EXPECT_NE(compiler.cache_key(spec), plain);
}

TEST(JitCompiler, KeyDoesNotDependOnTheCcclPath) {
  // The same CCCL reached by another spelling of its folder (a symlink where the toolkit has one,
  // a trailing separator and a dot otherwise).
  const Compiler compiler;
  const std::filesystem::path canonical = std::filesystem::canonical(compiler.cccl_include());
  const std::filesystem::path dotted = canonical.parent_path() / "." / "cccl" / "";
  const Compiler other(compiler.headers(), canonical == compiler.cccl_include() ? dotted : canonical);
  EXPECT_NE(other.cccl_include().string(), "");
  EXPECT_EQ(other.cache_key(ring_kernel()), compiler.cache_key(ring_kernel()));
}

TEST(JitCompiler, FindsCcclFromTheEnvironment) {
  const std::filesystem::path found = find_cccl_include();
  EXPECT_TRUE(std::filesystem::exists(found / "cuda" / "ptx"));
  {
    test::ScopedEnv env("TILECAST_CCCL_INCLUDE", found.string());
    EXPECT_EQ(find_cccl_include(), found);
  }
  {
    test::ScopedEnv env("TILECAST_CCCL_INCLUDE", "/nonexistent/cccl");
    try {
      find_cccl_include();
      FAIL() << "expected an error";
    } catch (const Error& e) {
      EXPECT_TRUE(Contains(e.what(), "TILECAST_CCCL_INCLUDE=/nonexistent/cccl"));
    }
  }
  EXPECT_THROW(Compiler({}, "/nonexistent/cccl"), Error);
}

}  // namespace
}  // namespace tilecast::jit
