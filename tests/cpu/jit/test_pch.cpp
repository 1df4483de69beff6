// NVRTC's automatic precompiled headers (jit/pch.hpp): the same cubin bytes with and without,
// options that stay out of the cache key, a PCH that is really made, a folder that went made
// again, and per-process folders that are private and swept when their process is gone.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "jit/compiler.hpp"
#include "jit/pch.hpp"
#include "jit_test_util.hpp"

namespace tilecast::jit {
namespace {

namespace fs = std::filesystem;
using test::Contains;

// The GEMM kernels' own prefix (kernel.cuh and CCCL under it), as a smaller kernel; -frandom-seed
// fixes the random part of NVRTC's internal symbol names, which otherwise differ between any two
// compiles of one program.
KernelSpec seeded_kernel(int variant) {
  KernelSpec spec;
  spec.source = R"(#include "tilecast/device/kernels/gemm_sm90/kernel.cuh"

namespace jit_test {
template <int kVariant>
__global__ void touch(tilecast::uint32_t* out) {
  out[threadIdx.x] = tilecast::ceil_div(threadIdx.x + kVariant, 3u) + cuda::ptx::get_sreg_cluster_ctarank();
}
}  // namespace jit_test
)";
  spec.name_expression = "jit_test::touch<" + std::to_string(variant) + ">";
  spec.options = {"-frandom-seed=17"};
  return spec;
}

bool has(const std::vector<std::string>& v, const std::string& x) { return std::find(v.begin(), v.end(), x) != v.end(); }

TEST(JitPch, SameCubinWithAndWithout) {
  const Compiler plain(Compiler().headers(), find_cccl_include(), false);
  const Compiler pch(plain.headers(), plain.cccl_include(), true);
  ASSERT_FALSE(pch_folder().empty());
  // The first compile makes the PCH, the second uses it: both must match the plain compile.
  for (int variant : {1, 2}) {
    const CompiledKernel a = plain.compile(seeded_kernel(variant));
    const CompiledKernel b = pch.compile(seeded_kernel(variant));
    EXPECT_EQ(a.lowered_name, b.lowered_name);
    EXPECT_TRUE(a.cubin == b.cubin) << "variant " << variant << ": " << a.cubin.size() << " vs " << b.cubin.size()
                                    << " bytes";
    EXPECT_EQ(a.report.registers, b.report.registers);
  }
  // NVRTC did make one (it removes its files at exit, so they are there now).
  ASSERT_TRUE(Contains(pch.pch_dir().string(), pch_folder().string()));
  bool made = false;
  for (const fs::directory_entry& e : fs::directory_iterator(pch.pch_dir())) made |= e.path().extension() == ".pch";
  EXPECT_TRUE(made) << "no .pch file in " << pch.pch_dir();
}

TEST(JitPch, OptionsStayOutOfTheKey) {
  const Compiler plain(Compiler().headers(), find_cccl_include(), false);
  const Compiler pch(plain.headers(), plain.cccl_include(), true);
  const KernelSpec spec = seeded_kernel(1);
  EXPECT_EQ(plain.cache_key(spec), pch.cache_key(spec));
  const std::vector<std::string> with = pch.options(spec), without = plain.options(spec);
  EXPECT_TRUE(has(with, "-pch"));
  EXPECT_TRUE(has(with, "--pch-dir=" + pch.pch_dir().string()));
  EXPECT_FALSE(has(without, "-pch"));
  EXPECT_EQ(with.size(), without.size() + 4);
}

// NVRTC fails a compile whose PCH folder is missing rather than compiling without: a folder that
// went (a /tmp cleaner, a sweep by a process in another pid namespace) is made again, and one that
// cannot be (a file in its place) leaves the compile without PCH. Either way the cubin is the one
// a compile without PCH gives.
TEST(JitPch, AFolderThatWentIsMadeAgainOrDoneWithout) {
  const Compiler plain(Compiler().headers(), find_cccl_include(), false);
  const Compiler pch(plain.headers(), plain.cccl_include(), true);
  ASSERT_TRUE(pch.precompiled_headers());
  pch.compile(seeded_kernel(1));
  fs::remove_all(pch.pch_dir());
  CompiledKernel made_again;
  ASSERT_NO_THROW(made_again = pch.compile(seeded_kernel(2)));
  EXPECT_TRUE(fs::is_directory(pch.pch_dir()));
  EXPECT_TRUE(made_again.cubin == plain.compile(seeded_kernel(2)).cubin);
  fs::remove_all(pch.pch_dir());
  { std::ofstream blocker(pch.pch_dir()); }
  CompiledKernel without;
  ASSERT_NO_THROW(without = pch.compile(seeded_kernel(3)));
  EXPECT_TRUE(without.cubin == plain.compile(seeded_kernel(3)).cubin);
  fs::remove(pch.pch_dir());
}

// NVRTC checks a PCH against the options, not against in-memory header contents (a probe showed a
// PCH made with `kValue = 111` answering a compile whose header said 222): each header set must get
// its own PCH folder.
TEST(JitPch, ChangedHeaderIsNeverAnsweredFromAnOldPch) {
  const auto headers_with = [](const char* value) {
    std::vector<SourceHeader> h = Compiler().headers();
    h.push_back({"jit_test/value.cuh", std::string("constexpr int kValue = ") + value + ";\n"});
    return h;
  };
  KernelSpec spec;
  spec.source = R"(#include "jit_test/value.cuh"
#include "tilecast/device/kernels/gemm_sm90/kernel.cuh"

namespace jit_test {
__global__ void value(int* out) { out[threadIdx.x] = kValue; }
}  // namespace jit_test
)";
  spec.name_expression = "jit_test::value";
  spec.options = {"-frandom-seed=17"};
  const Compiler first(headers_with("111"), find_cccl_include(), true);
  const Compiler second(headers_with("222"), first.cccl_include(), true);
  const Compiler plain(headers_with("222"), first.cccl_include(), false);
  EXPECT_NE(first.pch_dir(), second.pch_dir());
  const std::string made_with_111 = first.compile(spec).cubin;  // makes a PCH
  const std::string with_222 = second.compile(spec).cubin;
  EXPECT_NE(with_222, made_with_111);
  EXPECT_TRUE(with_222 == plain.compile(spec).cubin) << "the 222 compile did not match a compile without PCH";
}

TEST(JitPch, EnvironmentSwitchesItOff) {
  {
    test::ScopedEnv env("TILECAST_JIT_PCH", "0");
    EXPECT_FALSE(pch_enabled());
    EXPECT_FALSE(Compiler().precompiled_headers());
  }
  test::ScopedEnv env("TILECAST_JIT_PCH", std::nullopt);
  EXPECT_TRUE(pch_enabled());
}

TEST(JitPch, FoldersArePrivateAndThoseOfGoneProcessesAreSwept) {
  test::TempDir base;
  // A pid that no longer runs: a child that has exited and been reaped.
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);
  const fs::path stale = base.path() / ("tilecast-pch-" + std::to_string(child) + "-1");
  const fs::path live = base.path() / ("tilecast-pch-" + std::to_string(::getppid()) + "-1");
  const fs::path other = base.path() / "tilecast-pch-notapid";
  for (const fs::path& p : {stale, live, other}) fs::create_directories(p / "sub");

  const fs::path mine = make_pch_folder(base.path());
  ASSERT_FALSE(mine.empty());
  EXPECT_TRUE(Contains(mine.filename().string(), "tilecast-pch-" + std::to_string(::getpid()) + "-"));
  EXPECT_EQ(fs::status(mine).permissions() & fs::perms::all, fs::perms::owner_all);
  EXPECT_FALSE(fs::exists(stale));
  EXPECT_TRUE(fs::exists(live));   // its process (our parent) runs
  EXPECT_TRUE(fs::exists(other));  // not one of ours
}

}  // namespace
}  // namespace tilecast::jit
