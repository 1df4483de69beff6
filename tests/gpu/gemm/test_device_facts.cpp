// The device's facts as read_facts gathers them: printed (the H200 model assumes its memory clock
// and bus width; this is where the device says), consistent with derive_facts, and on our H200
// the model's, so that its plans are the ones the CPU tests record.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "api/device_state.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::test {
namespace {

// Derived rates of our H200 agree with the model's this closely (the model's figures are ours).
constexpr double kModelTolerance = 0.01;

bool is_h200(const plan::DeviceFacts& f) { return f.name.find("H200") != std::string::npos; }

TEST(DeviceFacts, ReadFactsOfThisDevice) {
  const plan::DeviceFacts& f = api::DeviceState::current().facts();
  const plan::DeviceAttributes& a = f.attributes;
  std::printf("[ measured ] attributes: %u SMs, L2 %llu bytes, SM clock %u kHz, memory clock %u kHz, bus %u bits, "
              "resident clusters %u/%u/%u/%u\n[ measured ] %s",
              a.num_sms, static_cast<unsigned long long>(a.l2_bytes), a.sm_clock_khz, a.memory_clock_khz,
              a.memory_bus_bits, a.max_active_clusters[0], a.max_active_clusters[1], a.max_active_clusters[2],
              a.max_active_clusters[3], plan::describe_facts(f).c_str());
  EXPECT_GT(a.sm_clock_khz, 0u);
  EXPECT_GT(a.memory_clock_khz, 0u);
  EXPECT_GT(a.memory_bus_bits, 0u);
  EXPECT_EQ(f.arch, plan::Arch::kSM90);
  const plan::DeviceFacts again = plan::derive_facts(a);
  EXPECT_EQ(again.peak_bf16_tflops, f.peak_bf16_tflops) << "read_facts only gathers; derive_facts derives";
  EXPECT_EQ(again.hbm_tb_per_s, f.hbm_tb_per_s);
  EXPECT_EQ(again.max_active_clusters, f.max_active_clusters);
  if (!is_h200(f)) GTEST_SKIP() << f.name << " is not our H200: no model to compare with";
  const plan::DeviceFacts m = plan::DeviceFacts::h200_model();
  EXPECT_EQ(a.num_sms, m.attributes.num_sms);
  EXPECT_EQ(a.l2_bytes, m.attributes.l2_bytes);
  EXPECT_EQ(a.sm_clock_khz, m.attributes.sm_clock_khz) << "fix h200_attributes() in src/plan/device_facts.cpp";
  EXPECT_EQ(a.memory_clock_khz, m.attributes.memory_clock_khz) << "the model's memory clock is assumed: fix it there";
  EXPECT_EQ(a.memory_bus_bits, m.attributes.memory_bus_bits) << "the model's bus width is assumed: fix it there";
  EXPECT_EQ(a.max_active_clusters, m.attributes.max_active_clusters);
  EXPECT_NEAR(f.peak_bf16_tflops, m.peak_bf16_tflops, kModelTolerance * m.peak_bf16_tflops);
  EXPECT_NEAR(f.hbm_tb_per_s, m.hbm_tb_per_s, kModelTolerance * m.hbm_tb_per_s);
  EXPECT_NEAR(f.l2_tb_per_s, m.l2_tb_per_s, kModelTolerance * m.l2_tb_per_s);
}

TEST(DeviceFacts, ThisH200PlansAsTheModel) {
  const plan::DeviceFacts& f = api::DeviceState::current().facts();
  if (!is_h200(f)) GTEST_SKIP() << f.name << " is not our H200";
  const plan::DeviceFacts m = plan::DeviceFacts::h200_model();
  struct Shape {
    uint32_t m, n, k;
  };
  for (const Shape& s : {Shape{8192, 8192, 8192}, Shape{4096, 2112, 7168}, Shape{4096, 576, 7168},
                         Shape{128, 2112, 7168}, Shape{128, 7168, 16384}, Shape{128, 32768, 512}}) {
    const plan::GemmDesc d = plan::dense_desc(s.m, s.n, s.k, 1, DType::kBF16, false);
    const std::string here = plan::plan_gemm(d, f).describe(), model = plan::plan_gemm(d, m).describe();
    EXPECT_EQ(here.substr(0, here.find(" est ")), model.substr(0, model.find(" est ")))
        << s.m << "x" << s.n << "x" << s.k;
  }
}

}  // namespace
}  // namespace tilecast::test
