#include "machine_info.hpp"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <sstream>
#include <vector>

#include <cuda_runtime.h>

#include "nvml.hpp"
#include "tilecast_test/reference_gemm.hpp"

#ifndef TILECAST_BENCH_GIT_COMMIT
#define TILECAST_BENCH_GIT_COMMIT "unknown"
#endif

namespace tilecast::bench {
namespace {

// One sample of the SM clock, power and temperature, from NVML where it is open.
ClockSample sample_clocks(const Nvml& nvml) {
  ClockSample s;
  if (!nvml.lib || !nvml.clock) return s;
  unsigned v = 0;
  if (nvml.clock(nvml.dev, kNvmlClockSm, &v) == kNvmlSuccess) {
    s.valid = true;
    s.sm_mhz = v;
  }
  if (nvml.power && nvml.power(nvml.dev, &v) == kNvmlSuccess) s.power_w = v / 1000.0;
  if (nvml.temperature && nvml.temperature(nvml.dev, kNvmlTemperatureGpu, &v) == kNvmlSuccess) s.temperature_c = v;
  return s;
}

std::string run_command(const std::string& cmd) {
  std::string out;
  if (FILE* f = popen(cmd.c_str(), "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, f)) out += buf;
    pclose(f);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r' || out.back() == ' ')) out.pop_back();
  return out;
}

std::vector<std::string> split_csv(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  std::string item;
  while (std::getline(ss, item, ',')) {
    const size_t b = item.find_first_not_of(' '), e = item.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : item.substr(b, e - b + 1));
  }
  return out;
}

unsigned to_uint(const std::string& s) {
  try {
    return static_cast<unsigned>(std::stod(s));
  } catch (const std::exception&) {
    return 0;
  }
}

void read_nvidia_smi(MachineInfo& m) {
  const std::string line = run_command(
      "nvidia-smi --query-gpu=driver_version,clocks.sm,clocks.max.sm,clocks.mem,clocks.max.mem,"
      "power.limit,temperature.gpu --format=csv,noheader,nounits -i " + m.pci_bus_id + " 2>/dev/null");
  const std::vector<std::string> f = split_csv(line);
  if (f.size() < 7 || f[0].empty()) return;
  m.driver_version = f[0];
  m.sm_clock_mhz = to_uint(f[1]);
  m.max_sm_clock_mhz = to_uint(f[2]);
  m.mem_clock_mhz = to_uint(f[3]);
  m.max_mem_clock_mhz = to_uint(f[4]);
  try {
    m.power_limit_w = std::stod(f[5]);
  } catch (const std::exception&) {
  }
  m.temperature_c = to_uint(f[6]);
  m.clock_source = "nvidia-smi";
}

}  // namespace

struct ClockProbe::Impl {
  Nvml nvml;
};

ClockProbe::ClockProbe(const MachineInfo& m) : impl_(std::make_unique<Impl>()) {
  if (m.has_gpu) impl_->nvml.open(m.pci_bus_id);
}

ClockProbe::~ClockProbe() { impl_->nvml.close(); }

ClockSample ClockProbe::sample() const { return sample_clocks(impl_->nvml); }

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string quote_command_line(int argc, char** argv) {
  std::string out;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    const bool plain = !a.empty() && a.find_first_not_of(
        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=,:+@%") == std::string::npos;
    if (i) out += ' ';
    if (plain) {
      out += a;
    } else {
      out += '\'';
      for (char c : a) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

MachineInfo probe_machine(int argc, char** argv, int device) {
  MachineInfo m;
  m.date_utc = utc_now();
  m.command_line = quote_command_line(argc, argv);
  m.git_commit = TILECAST_BENCH_GIT_COMMIT;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) m.hostname = host;
  m.cublaslt_version = test::CublasLt::version();
  cudaRuntimeGetVersion(&m.cuda_runtime);
  cudaDriverGetVersion(&m.cuda_driver_api);  // 0 when there is no driver

  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    m.no_gpu_reason = err != cudaSuccess ? cudaGetErrorString(err) : "device count 0";
    cudaGetLastError();  // clear it
    return m;
  }
  if (device < 0 || device >= count) {
    m.no_gpu_reason = "device " + std::to_string(device) + " not present (" + std::to_string(count) + " GPUs)";
    return m;
  }
  m.device = device;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, m.device) != cudaSuccess) {
    m.no_gpu_reason = "cudaGetDeviceProperties failed";
    cudaGetLastError();
    return m;
  }
  m.has_gpu = true;
  m.gpu_name = prop.name;
  m.cc_major = prop.major;
  m.cc_minor = prop.minor;
  m.sm_count = prop.multiProcessorCount;
  m.l2_bytes = prop.l2CacheSize;
  m.memory_bytes = static_cast<long long>(prop.totalGlobalMem);
  char bus[64] = {};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, m.device) == cudaSuccess) m.pci_bus_id = bus;
  m.driver_version = "unknown";

  Nvml nvml;
  // NVML where it opens with the clock readers this needs; nvidia-smi otherwise.
  const bool opened = nvml.open(m.pci_bus_id).empty();
  if (opened && nvml.driver_version && nvml.clock && nvml.max_clock) {
    char ver[96] = {};
    if (nvml.driver_version(ver, sizeof ver) == kNvmlSuccess) m.driver_version = ver;
    unsigned v = 0;
    if (nvml.clock(nvml.dev, kNvmlClockSm, &v) == kNvmlSuccess) m.sm_clock_mhz = v;
    if (nvml.max_clock(nvml.dev, kNvmlClockSm, &v) == kNvmlSuccess) m.max_sm_clock_mhz = v;
    if (nvml.clock(nvml.dev, kNvmlClockMem, &v) == kNvmlSuccess) m.mem_clock_mhz = v;
    if (nvml.max_clock(nvml.dev, kNvmlClockMem, &v) == kNvmlSuccess) m.max_mem_clock_mhz = v;
    if (nvml.power_limit && nvml.power_limit(nvml.dev, &v) == kNvmlSuccess) m.power_limit_w = v / 1000.0;
    if (nvml.temperature && nvml.temperature(nvml.dev, kNvmlTemperatureGpu, &v) == kNvmlSuccess) m.temperature_c = v;
    m.clock_source = "nvml";
  } else {
    read_nvidia_smi(m);
  }
  nvml.close();
  return m;
}

std::string MachineInfo::one_line() const {
  std::ostringstream s;
  if (!has_gpu) {
    s << "no GPU (" << no_gpu_reason << "); cuda runtime " << cuda_runtime << ", " << cublaslt_version;
  } else {
    s << gpu_name << " (sm_" << cc_major << cc_minor << ", " << sm_count << " SMs, L2 "
      << (l2_bytes >> 20) << " MiB, " << (memory_bytes >> 30) << " GiB, bus " << pci_bus_id
      << "); driver " << driver_version << " (CUDA " << cuda_driver_api << "), runtime "
      << cuda_runtime << ", " << cublaslt_version << "; SM clock " << sm_clock_mhz << "/"
      << max_sm_clock_mhz << " MHz, mem " << mem_clock_mhz << "/" << max_mem_clock_mhz
      << " MHz, power limit " << power_limit_w << " W, " << temperature_c << " C (" << clock_source
      << ")";
  }
  s << "; host " << hostname << "; " << date_utc << "; tilecast " << git_commit;
  return s.str();
}

}  // namespace tilecast::bench
