// tilecast-bench's command line (tools/bench/options.cpp): what each option sets, and that a bad
// command line is refused with a message naming the option and its rule.
#include <gtest/gtest.h>

#include <initializer_list>
#include <stdexcept>
#include <string>
#include <vector>

#include "options.hpp"
#include "problem_desc.hpp"

namespace tilecast::bench {
namespace {

Options parse(std::initializer_list<const char*> args) {
  std::vector<std::string> storage{"tilecast-bench"};
  for (const char* a : args) storage.emplace_back(a);
  std::vector<char*> argv;
  for (std::string& s : storage) argv.push_back(s.data());
  return parse_options(static_cast<int>(argv.size()), argv.data());
}

// The message of the std::invalid_argument that parsing `args` throws ("" when it parses).
std::string refusal(std::initializer_list<const char*> args) {
  try {
    parse(args);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

TEST(BenchOptions, DefaultsAreTheDocumentedOnes) {
  const Options o = parse({});
  EXPECT_FALSE(o.sweep);
  EXPECT_EQ(o.sweep_limit, kDefaultSweepLimit);
  EXPECT_EQ(o.warmup, 10);
  EXPECT_EQ(o.iters, 50);
  EXPECT_EQ(o.min_ms, 0) << "--iters alone unless a minimum loop time is asked for";
  EXPECT_EQ(parse({"--min-ms", "250"}).min_ms, 250);
  EXPECT_FALSE(o.json_rounds);
  EXPECT_TRUE(parse({"--json-rounds"}).json_rounds);
  EXPECT_EQ(o.flush_bytes, size_t{256} << 20);
  EXPECT_FALSE(o.flush_read) << "the flush writes unless asked to read";
  EXPECT_TRUE(parse({"--flush-read"}).flush_read);
  EXPECT_EQ(o.calls_per_run, 1) << "one call per timed run unless asked";
  EXPECT_EQ(parse({"--calls-per-run", "8"}).calls_per_run, 8);
  EXPECT_FALSE(o.sustained) << "no sustained loop unless asked for";
  EXPECT_TRUE(parse({"--sustained", "--shape", "8192,8192,8192"}).sustained);
  EXPECT_EQ(parse({"--sustained", "--energy-s", "5"}).energy_s, 5.0);
  EXPECT_TRUE(o.balanced_order) << "the balanced order is the default";
  EXPECT_TRUE(parse({"--balanced-order"}).balanced_order);
  EXPECT_FALSE(parse({"--fixed-order"}).balanced_order);
  EXPECT_EQ(o.config, GemmConfig{});
  // No suite and no shape: the default suite.
  const std::vector<BenchProblem> problems = selected_problems(o);
  EXPECT_EQ(problems.size(), make_suite("default").size());
}

TEST(BenchOptions, SweepAndItsLimit) {
  const Options o = parse({"--sweep", "--suite", "m4096"});
  EXPECT_TRUE(o.sweep);
  EXPECT_EQ(o.sweep_limit, kDefaultSweepLimit);
  EXPECT_EQ(o.suites, std::vector<std::string>{"m4096"});

  EXPECT_EQ(parse({"--sweep", "--sweep-limit", "5"}).sweep_limit, 5u);
  EXPECT_EQ(parse({"--sweep-limit", "7", "--sweep"}).sweep_limit, 7u);  // in either order
  EXPECT_EQ(parse({"--sweep", "--sweep-limit", "0"}).sweep_limit, 0u);  // 0: every config

  const Options plan_only = parse({"--sweep", "--plan-only", "--shape", "4096,576,7168"});
  EXPECT_TRUE(plan_only.sweep && plan_only.plan_only);
  ASSERT_EQ(plan_only.shapes.size(), 1u);
  EXPECT_EQ(plan_only.shapes[0].n, 576);
}

TEST(BenchOptions, SweepKeepsTheConfigItIsGiven) {
  const Options o = parse({"--sweep", "--config", "cluster=2x1,multicast_b=0"});
  EXPECT_EQ(o.config.cluster_m, 2u);
  EXPECT_EQ(o.config.cluster_n, 1u);
  EXPECT_EQ(o.config.multicast_b, 0);
}

TEST(BenchOptions, BadSweepOptionsAreRefusedByName) {
  EXPECT_NE(refusal({"--sweep", "--sweep-limit", "-1"}).find("--sweep-limit wants an integer in [0, "), std::string::npos);
  EXPECT_NE(refusal({"--sweep", "--sweep-limit", "ten"}).find("--sweep-limit"), std::string::npos);
  EXPECT_NE(refusal({"--sweep", "--sweep-limit"}).find("--sweep-limit needs a value"), std::string::npos);
  EXPECT_NE(refusal({"--sweep-limit", "4"}).find("--sweep-limit needs --sweep"), std::string::npos);
  for (const char* compare : {"--cluster-compare", "--split-compare"}) {
    const std::string why = refusal({"--sweep", compare});
    EXPECT_NE(why.find("--sweep"), std::string::npos) << compare;
    EXPECT_NE(why.find(compare), std::string::npos) << why;
  }
}

TEST(BenchOptions, OtherBadInputIsRefusedByName) {
  EXPECT_NE(refusal({"--iters", "0"}).find("--iters wants an integer in [1, "), std::string::npos);
  EXPECT_NE(refusal({"--suite", "nonesuch"}).find("unknown suite 'nonesuch'"), std::string::npos);
  EXPECT_NE(refusal({"--shape", "4096,0,7168"}).find("--shape wants m,n,k[,batch] of positive integers"),
            std::string::npos);
  EXPECT_NE(refusal({"--peak-tflops", "-3"}).find("--peak-tflops wants a positive number"), std::string::npos);
  EXPECT_NE(refusal({"--config", "cluster=two"}).find("config: cluster wants AxB"), std::string::npos);
  EXPECT_NE(refusal({"--config", "multicast_a=2"}).find("config: multicast_a wants 0 (off), 1 (on) or -1"), std::string::npos);
  EXPECT_NE(refusal({"--min-ms", "-1"}).find("--min-ms wants an integer in [0, "), std::string::npos);
  EXPECT_NE(refusal({"--calls-per-run", "0"}).find("--calls-per-run wants an integer in [1, "), std::string::npos);
  EXPECT_NE(refusal({"--sweeep"}).find("unknown option '--sweeep'"), std::string::npos);
}

TEST(BenchOptions, RowBytesPadEveryProblemsOperandRowsAndTellThePlanner) {
  EXPECT_EQ(parse({}).row_bytes, kLeastRowBytes);
  const Options o = parse({"--shape", "4097,4097,4097", "--row-bytes", "128"});
  const std::vector<BenchProblem> problems = selected_problems(o);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_EQ(problems[0].row_bytes, 128u);
  EXPECT_EQ(problems[0].label(), "4097x4097x4097 rows128");
  // The planner is told what the workload holds: lines where padded to 128, 16 bytes otherwise.
  EXPECT_EQ(problem_desc(problems[0]).a_row_alignment, 128u);
  EXPECT_EQ(problem_desc(selected_problems(parse({"--shape", "4097,4097,4097"}))[0]).b_row_alignment, 16u);
  EXPECT_NE(refusal({"--row-bytes", "48"}).find("--row-bytes takes 16, 32, 64 or 128"), std::string::npos);
  EXPECT_NE(refusal({"--row-bytes", "8"}).find("--row-bytes"), std::string::npos);
}

TEST(BenchOptions, UsageDocumentsTheSweepAndItsDefaultLimit) {
  const std::string u = usage();
  EXPECT_NE(u.find("--sweep "), std::string::npos);
  EXPECT_NE(u.find("--sweep-limit N"), std::string::npos);
  EXPECT_NE(u.find("(default " + std::to_string(kDefaultSweepLimit) + "; 0: all)"), std::string::npos);
}

}  // namespace
}  // namespace tilecast::bench
