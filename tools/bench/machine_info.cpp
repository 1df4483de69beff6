#include "machine_info.hpp"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <sstream>
#include <vector>

#include <cuda_runtime.h>

#include "tilecast_test/reference_gemm.hpp"

#ifndef TILECAST_BENCH_GIT_COMMIT
#define TILECAST_BENCH_GIT_COMMIT "unknown"
#endif

namespace tilecast::bench {
namespace {

// The few NVML entry points used, declared by hand (the toolkit here ships no nvml.h). NVML's ABI
// for these has been stable for many years: int status (0 = success), opaque device handle,
// clock and sensor selectors as plain enums.
using nvmlReturn_t = int;
using nvmlDevice_t = struct nvmlDevice_st*;
constexpr int kNvmlClockSm = 1, kNvmlClockMem = 2, kNvmlTemperatureGpu = 0;

struct Nvml {
  void* lib = nullptr;
  nvmlDevice_t dev = nullptr;
  nvmlReturn_t (*init)() = nullptr;
  nvmlReturn_t (*shutdown)() = nullptr;
  nvmlReturn_t (*by_pci)(const char*, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*count)(unsigned*) = nullptr;
  nvmlReturn_t (*by_index)(unsigned, nvmlDevice_t*) = nullptr;
  nvmlReturn_t (*driver_version)(char*, unsigned) = nullptr;
  nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned*) = nullptr;
  nvmlReturn_t (*power)(nvmlDevice_t, unsigned*) = nullptr;        // mW
  nvmlReturn_t (*power_limit)(nvmlDevice_t, unsigned*) = nullptr;  // mW
  nvmlReturn_t (*temperature)(nvmlDevice_t, int, unsigned*) = nullptr;

  template <class F>
  bool sym(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    return f != nullptr;
  }

  // Opens NVML for the GPU at this PCI bus id; false (and nothing held) when it cannot.
  bool open(const std::string& pci_bus_id) {
    lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return false;
    bool ok = sym(init, "nvmlInit_v2") && sym(shutdown, "nvmlShutdown") &&
              sym(by_pci, "nvmlDeviceGetHandleByPciBusId_v2") &&
              sym(driver_version, "nvmlSystemGetDriverVersion") && sym(clock, "nvmlDeviceGetClockInfo") &&
              sym(max_clock, "nvmlDeviceGetMaxClockInfo");
    sym(count, "nvmlDeviceGetCount_v2");
    sym(by_index, "nvmlDeviceGetHandleByIndex_v2");
    sym(power, "nvmlDeviceGetPowerUsage");
    sym(power_limit, "nvmlDeviceGetEnforcedPowerLimit");
    sym(temperature, "nvmlDeviceGetTemperature");
    if (ok && init() == 0) {
      if (by_pci(pci_bus_id.c_str(), &dev) == 0) return true;
      // NVML numbers GPUs its own way, so an index is only safe when there is one GPU.
      unsigned n = 0;
      if (count && by_index && count(&n) == 0 && n == 1 && by_index(0, &dev) == 0) return true;
      shutdown();
    }
    dlclose(lib);
    lib = nullptr;
    return false;
  }

  void close() {
    if (!lib) return;
    shutdown();
    dlclose(lib);
    lib = nullptr;
  }

  ClockSample sample() const {
    ClockSample s;
    if (!lib) return s;
    unsigned v = 0;
    if (clock(dev, kNvmlClockSm, &v) == 0) {
      s.valid = true;
      s.sm_mhz = v;
    }
    if (power && power(dev, &v) == 0) s.power_w = v / 1000.0;
    if (temperature && temperature(dev, kNvmlTemperatureGpu, &v) == 0) s.temperature_c = v;
    return s;
  }
};

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

ClockSample ClockProbe::sample() const { return impl_->nvml.sample(); }

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
  if (nvml.open(m.pci_bus_id)) {
    char ver[96] = {};
    if (nvml.driver_version(ver, sizeof ver) == 0) m.driver_version = ver;
    unsigned v = 0;
    if (nvml.clock(nvml.dev, kNvmlClockSm, &v) == 0) m.sm_clock_mhz = v;
    if (nvml.max_clock(nvml.dev, kNvmlClockSm, &v) == 0) m.max_sm_clock_mhz = v;
    if (nvml.clock(nvml.dev, kNvmlClockMem, &v) == 0) m.mem_clock_mhz = v;
    if (nvml.max_clock(nvml.dev, kNvmlClockMem, &v) == 0) m.max_mem_clock_mhz = v;
    if (nvml.power_limit && nvml.power_limit(nvml.dev, &v) == 0) m.power_limit_w = v / 1000.0;
    if (nvml.temperature && nvml.temperature(nvml.dev, kNvmlTemperatureGpu, &v) == 0) m.temperature_c = v;
    m.clock_source = "nvml";
    nvml.close();
  } else {
    read_nvidia_smi(m);
  }
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
