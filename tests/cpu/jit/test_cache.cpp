// The disk cache: hits, keys, a copied folder, damaged entries, and several processes filling an
// empty cache at once.
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <optional>
#include <set>

#include "gpu/jit/test_kernels.hpp"
#include "jit/build.hpp"
#include "jit_test_util.hpp"

extern char** environ;

namespace tilecast::jit {
namespace {

namespace fs = std::filesystem;
using test::Contains;
using test::TempDir;

std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> out;
  if (!fs::exists(dir)) return out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(JitCache, SecondBuildIsADiskHit) {
  test::ScopedEnv quiet("TILECAST_JIT_DEBUG", std::nullopt);  // level 2 adds a .cubin file
  TempDir dir;
  const Compiler compiler;
  const DiskCache cache(dir.path());
  const KernelSpec spec = test::add_spec(3);

  const BuildResult first = build_kernel(compiler, cache, spec);
  EXPECT_FALSE(first.disk_hit);
  EXPECT_GT(first.compile_seconds, 0.0);
  EXPECT_TRUE(fs::exists(cache.entry_path(first.key)));
  EXPECT_EQ(cache.entry_path(first.key).parent_path(), dir.path() / "v1");
  EXPECT_EQ(files_in(dir.path() / "v1"),
            (std::vector<std::string>{first.key.hex() + ".cu", first.key.hex() + ".tcjit"}));

  const BuildResult second = build_kernel(Compiler(), DiskCache(dir.path()), spec);
  EXPECT_TRUE(second.disk_hit);
  EXPECT_EQ(second.compile_seconds, 0.0);
  EXPECT_EQ(second.key, first.key);
  EXPECT_EQ(second.kernel.cubin, first.kernel.cubin);
  EXPECT_EQ(second.kernel.lowered_name, first.kernel.lowered_name);
  EXPECT_EQ(second.kernel.report, first.kernel.report);
  EXPECT_EQ(second.kernel.log, first.kernel.log);

  // The readable source names what it is.
  std::ifstream cu(dir.path() / "v1" / (first.key.hex() + ".cu"));
  const std::string text((std::istreambuf_iterator<char>(cu)), std::istreambuf_iterator<char>());
  EXPECT_TRUE(Contains(text, "name expression: tc_test::add_to<3>"));
  EXPECT_TRUE(Contains(text, "__global__ void add_to"));
}

TEST(JitCache, DifferentSpecsAreDifferentEntries) {
  TempDir dir;
  const Compiler compiler;
  const DiskCache cache(dir.path());
  const BuildResult a = build_kernel(compiler, cache, test::add_spec(1));
  KernelSpec with_option = test::add_spec(1);
  with_option.options.push_back("-DTC_SOMETHING=2");
  const BuildResult b = build_kernel(compiler, cache, with_option);
  EXPECT_FALSE(b.disk_hit);
  EXPECT_NE(a.key, b.key);
  EXPECT_TRUE(build_kernel(compiler, cache, test::add_spec(1)).disk_hit);
}

TEST(JitCache, CopiedFolderStillHits) {
  TempDir original, elsewhere;
  const KernelSpec spec = test::add_spec(5);
  const BuildResult first = build_kernel(Compiler(), DiskCache(original.path()), spec);
  ASSERT_FALSE(first.disk_hit);

  const fs::path copy = elsewhere.path() / "moved" / "cache";
  fs::create_directories(copy.parent_path());
  fs::copy(original.path(), copy, fs::copy_options::recursive);
  fs::remove_all(original.path() / "v1");

  test::ScopedEnv env("TILECAST_CACHE_DIR", copy.string());
  ASSERT_EQ(DiskCache::default_dir(), copy);
  const BuildResult again = build_kernel(Compiler(), DiskCache(DiskCache::default_dir()), spec);
  EXPECT_TRUE(again.disk_hit);
  EXPECT_EQ(again.kernel.cubin, first.kernel.cubin);
}

TEST(JitCache, DefaultDirFollowsTheEnvironment) {
  {
    test::ScopedEnv a("TILECAST_CACHE_DIR", "/tmp/tc-a");
    test::ScopedEnv b("XDG_CACHE_HOME", "/tmp/xdg");
    EXPECT_EQ(DiskCache::default_dir(), fs::path("/tmp/tc-a"));
  }
  {
    test::ScopedEnv a("TILECAST_CACHE_DIR", std::nullopt);
    test::ScopedEnv b("XDG_CACHE_HOME", "/tmp/xdg");
    EXPECT_EQ(DiskCache::default_dir(), fs::path("/tmp/xdg/tilecast"));
  }
  {
    test::ScopedEnv a("TILECAST_CACHE_DIR", std::nullopt);
    test::ScopedEnv b("XDG_CACHE_HOME", std::nullopt);
    test::ScopedEnv c("HOME", "/home/someone");
    EXPECT_EQ(DiskCache::default_dir(), fs::path("/home/someone/.cache/tilecast"));
  }
}

TEST(JitCache, DamagedEntryIsAMissAndIsRewritten) {
  TempDir dir;
  const Compiler compiler;
  const DiskCache cache(dir.path());
  const KernelSpec spec = test::add_spec(7);
  const BuildResult first = build_kernel(compiler, cache, spec);
  const fs::path entry = cache.entry_path(first.key);

  fs::resize_file(entry, fs::file_size(entry) - 100);  // a torn write
  EXPECT_FALSE(cache.load(first.key).has_value());
  const BuildResult rebuilt = build_kernel(compiler, cache, spec);
  EXPECT_FALSE(rebuilt.disk_hit);
  ASSERT_TRUE(cache.load(first.key).has_value());

  {  // one flipped byte in the cubin
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-10, std::ios::end);
    f.put('\x55' ^ static_cast<char>(f.peek()));
  }
  EXPECT_FALSE(cache.load(first.key).has_value());

  // An entry renamed to another key's name is not taken for it.
  build_kernel(compiler, cache, spec);
  Hash128 other = first.key;
  other.lo ^= 1;
  fs::copy_file(entry, cache.entry_path(other));
  EXPECT_FALSE(cache.load(other).has_value());
}

// Sizes whose sum wraps around to the payload's: the entry is a miss, not an exception.
TEST(JitCache, EntryWithWrappingSizesIsAMiss) {
  TempDir dir;
  const DiskCache cache(dir.path());
  const BuildResult built = build_kernel(Compiler(), cache, test::add_spec(8));
  const fs::path entry = cache.entry_path(built.key);
  std::string file;
  {
    std::ifstream in(entry, std::ios::binary);
    file.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  const size_t payload = file.size() - (file.find("\n\n") + 2);
  const auto set_field = [&](const std::string& name, const std::string& value) {
    const size_t at = file.find("\n" + name + " ") + name.size() + 2;
    file.replace(at, file.find('\n', at) - at, value);
  };
  set_field("log_bytes", std::to_string(SIZE_MAX));  // log_bytes + cubin_bytes == payload, wrapped
  set_field("cubin_bytes", std::to_string(payload + 1));
  std::ofstream(entry, std::ios::binary | std::ios::trunc) << file;
  std::optional<CompiledKernel> loaded;
  EXPECT_NO_THROW(loaded = cache.load(built.key));
  EXPECT_FALSE(loaded.has_value());
}

// A writer killed between write and rename leaves its temporary: the next process's first store
// removes it once it is an hour old, and leaves a live writer's (fresh) and other files alone.
TEST(JitCache, AKilledWritersTemporaryIsRemovedOnceStale) {
  test::ScopedEnv quiet("TILECAST_JIT_DEBUG", std::nullopt);  // level 2 adds a .cubin file
  TempDir dir;
  const fs::path folder = dir.path() / "v1";
  fs::create_directories(folder);
  const auto make = [&](const std::string& name, std::chrono::hours age) {
    std::ofstream(folder / name) << "partial";
    fs::last_write_time(folder / name, fs::file_time_type::clock::now() - age);
  };
  make(".0123.tcjit.tmp.4242.0.9f3a", std::chrono::hours(2));  // killed long ago
  make(".0123.cu.tmp.4243.1.77b1", std::chrono::hours(0));     // a writer still at work
  make("notes.txt", std::chrono::hours(2));                    // not the cache's
  const BuildResult built = build_kernel(Compiler(), DiskCache(dir.path()), test::add_spec(5));
  EXPECT_FALSE(built.disk_hit);
  EXPECT_EQ(files_in(folder), (std::vector<std::string>{".0123.cu.tmp.4243.1.77b1", built.key.hex() + ".cu",
                                                         built.key.hex() + ".tcjit", "notes.txt"}));
}

TEST(JitCache, DisabledCacheCompilesEveryTime) {
  const DiskCache none{fs::path()};
  EXPECT_FALSE(none.enabled());
  const BuildResult r = build_kernel(Compiler(), none, test::add_spec(2));
  EXPECT_FALSE(r.disk_hit);
  EXPECT_FALSE(none.load(r.key).has_value());
}

TEST(JitCache, ConcurrentProcessesLeaveOneWholeEntry) {
  constexpr int kWorkers = 4;
  test::ScopedEnv quiet("TILECAST_JIT_DEBUG", std::nullopt);  // level 2 adds a .cubin file
  TempDir dir;
  const fs::path cache_dir = dir.path() / "cache";
  const fs::path go = dir.path() / "go";
  const fs::path out_dir = dir.path() / "out";
  fs::create_directories(out_dir);

  std::vector<pid_t> pids;
  for (int i = 0; i < kWorkers; ++i) {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    const std::string out = (out_dir / ("worker" + std::to_string(i) + ".txt")).string();
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::string exe = TILECAST_JIT_CACHE_WORKER, a1 = cache_dir.string(), a2 = go.string();
    char* argv[] = {exe.data(), a1.data(), a2.data(), nullptr};
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv, environ);
    posix_spawn_file_actions_destroy(&actions);
    ASSERT_EQ(rc, 0) << "posix_spawn " << exe << ": " << std::strerror(rc);
    pids.push_back(pid);
  }
  std::ofstream(go).put('1');

  std::set<std::string> digests;
  int hits = 0;
  for (int i = 0; i < kWorkers; ++i) {
    int status = 0;
    ASSERT_EQ(waitpid(pids[i], &status, 0), pids[i]);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "worker " << i << " failed";
    std::ifstream in(out_dir / ("worker" + std::to_string(i) + ".txt"));
    std::string hit, cubin;
    in >> hit >> cubin;
    ASSERT_EQ(cubin.rfind("cubin=", 0), 0u) << "worker " << i << " printed '" << hit << "'";
    digests.insert(cubin.substr(6));
    hits += hit == "hit=1";
  }
  EXPECT_EQ(digests.size(), 1u) << "the workers' cubins differ";
  std::printf("%d of %d workers found the entry on disk\n", hits, kWorkers);

  // One entry and its source; no temporaries left behind.
  const Compiler compiler;
  const Hash128 key = compiler.cache_key(test::cluster_rank_spec());
  EXPECT_EQ(files_in(cache_dir / "v1"),
            (std::vector<std::string>{key.hex() + ".cu", key.hex() + ".tcjit"}));
  const auto entry = DiskCache(cache_dir).load(key);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(fnv128(entry->cubin).hex(), *digests.begin());
}

}  // namespace
}  // namespace tilecast::jit
