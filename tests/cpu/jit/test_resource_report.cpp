// Parsing ptxas -v output. The logs are what NVRTC 13.0 printed for small kernels.
#include <gtest/gtest.h>

#include "jit/resource_report.hpp"

namespace tilecast::jit {
namespace {

constexpr const char* kTwoEntries =
    "ptxas info    : 162 bytes gmem\n"
    "ptxas info    : Compiling entry function '_Z1kILi4EEvPf' for 'sm_90a'\n"
    "ptxas info    : Function properties for _Z1kILi4EEvPf\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 16 registers, used 1 barriers, 1024 bytes smem\n"
    "ptxas info    : Compile time = 7.993 ms\n"
    "ptxas info    : Compiling entry function '_Z1kILi4096EEvPf' for 'sm_90a'\n"
    "ptxas info    : Function properties for _Z1kILi4096EEvPf\n"
    "ptxas         .     16384 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 32 registers, used 1 barriers, 16384 bytes cumulative stack size, "
    "1024 bytes smem\n"
    "ptxas info    : Compile time = 17.113 ms\n";

constexpr const char* kSpills =
    "ptxas warning : Registers are spilled to local memory in function '_Z5spillPfPKf', 764 bytes "
    "spill stores, 764 bytes spill loads\n"
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function '_Z5spillPfPKf' for 'sm_90a'\n"
    "ptxas info    : Function properties for _Z5spillPfPKf\n"
    "ptxas         .     416 bytes stack frame, 764 bytes spill stores, 764 bytes spill loads\n"
    "ptxas info    : Used 32 registers, used 0 barriers, 416 bytes cumulative stack size\n";

TEST(JitResourceReport, ReadsTheNamedEntryOnly) {
  const ResourceReport small = parse_ptxas_report(kTwoEntries, "_Z1kILi4EEvPf");
  EXPECT_TRUE(small.found);
  EXPECT_EQ(small.registers, 16);
  EXPECT_EQ(small.barriers, 1);
  EXPECT_EQ(small.shared_bytes, 1024);
  EXPECT_EQ(small.stack_frame_bytes, 0);
  EXPECT_EQ(small.cumulative_stack_bytes, 0);
  EXPECT_FALSE(small.has_spills());
  EXPECT_FALSE(small.uses_local_memory());

  const ResourceReport big = parse_ptxas_report(kTwoEntries, "_Z1kILi4096EEvPf");
  EXPECT_TRUE(big.found);
  EXPECT_EQ(big.registers, 32);
  EXPECT_EQ(big.stack_frame_bytes, 16384);
  EXPECT_EQ(big.cumulative_stack_bytes, 16384);
  EXPECT_FALSE(big.has_spills());
  EXPECT_TRUE(big.uses_local_memory());
}

TEST(JitResourceReport, ReadsSpills) {
  const ResourceReport r = parse_ptxas_report(kSpills, "_Z5spillPfPKf");
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.registers, 32);
  EXPECT_EQ(r.barriers, 0);
  EXPECT_EQ(r.spill_store_bytes, 764);  // the warning line is not counted twice
  EXPECT_EQ(r.spill_load_bytes, 764);
  EXPECT_EQ(r.stack_frame_bytes, 416);
  EXPECT_EQ(r.shared_bytes, 0);
  EXPECT_TRUE(r.has_spills());
}

TEST(JitResourceReport, CountsSpillsOfNonEntryFunctions) {
  const std::string log =
      "ptxas info    : Function properties for _Z6helperv\n"
      "ptxas         .     24 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Compiling entry function '_Z4mainv' for 'sm_90a'\n"
      "ptxas info    : Function properties for _Z4mainv\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 0 barriers, 24 bytes cumulative stack size\n";
  const ResourceReport r = parse_ptxas_report(log, "_Z4mainv");
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.spill_store_bytes, 8);
  EXPECT_EQ(r.spill_load_bytes, 12);
  EXPECT_EQ(r.stack_frame_bytes, 0);
  EXPECT_EQ(r.cumulative_stack_bytes, 24);
}

TEST(JitResourceReport, MissingEntryIsNotFound) {
  EXPECT_FALSE(parse_ptxas_report(kTwoEntries, "_Z5otherv").found);
  EXPECT_FALSE(parse_ptxas_report("", "_Z1kILi4EEvPf").found);
}

TEST(JitResourceReport, StringRoundTrip) {
  const ResourceReport r = parse_ptxas_report(kSpills, "_Z5spillPfPKf");
  const auto back = ResourceReport::from_string(r.to_string());
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, r);
  EXPECT_FALSE(ResourceReport::from_string("regs=1 spill_st=0").has_value());
  EXPECT_FALSE(ResourceReport::from_string("garbage").has_value());
  // No report (the driver's compute cache answered NVRTC): stays unknown through the disk cache,
  // never read back as a report of zeros.
  const ResourceReport none = parse_ptxas_report("", "_Z1kILi4EEvPf");
  const auto none_back = ResourceReport::from_string(none.to_string());
  ASSERT_TRUE(none_back.has_value());
  EXPECT_FALSE(none_back->found);
}

}  // namespace
}  // namespace tilecast::jit
