#include "api/device_state.hpp"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "api/occupancy_probe.hpp"
#include "tilecast/device/kernels/gemm_sm90/geometry.cuh"
#include "tilecast/diagnostics.hpp"
#include "tilecast/plan/gemm_plan.hpp"
#include "tilecast/types.hpp"

namespace tilecast::api {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + " failed: " + cudaGetErrorString(e));
}

int attribute(cudaDeviceAttr attr, int device, const char* what) {
  int v = 0;
  check(cudaDeviceGetAttribute(&v, attr, device), what);
  return v;
}

// Gathers what the runtime says of the device; plan::derive_facts turns it into rates.
plan::DeviceFacts read_facts(int device) {
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  if (prop.major != 9 || prop.minor != 0)
    throw Error(std::string("device ") + prop.name + " is compute capability " + std::to_string(prop.major) + "." +
                std::to_string(prop.minor) + ": tilecast's kernels need SM90 (Hopper)");
  plan::DeviceAttributes a;
  a.name = prop.name;
  a.arch = plan::Arch::kSM90;
  a.num_sms = static_cast<uint32_t>(prop.multiProcessorCount);
  a.l2_bytes = static_cast<uint64_t>(prop.l2CacheSize);
  a.sm_clock_khz = static_cast<uint32_t>(attribute(cudaDevAttrClockRate, device, "cudaDevAttrClockRate"));
  a.memory_clock_khz =
      static_cast<uint32_t>(attribute(cudaDevAttrMemoryClockRate, device, "cudaDevAttrMemoryClockRate"));
  a.memory_bus_bits =
      static_cast<uint32_t>(attribute(cudaDevAttrGlobalMemoryBusWidth, device, "cudaDevAttrGlobalMemoryBusWidth"));
  // Every GEMM kernel holds one CTA per SM (its registers: launch_registers x threads is more
  // than half the register file, asserted for every variant in test_kernel_variants), so the
  // probe asks with the most shared memory a CTA may have, which allows one CTA per SM too.
  constexpr uint32_t kProbeThreads = 384;
  for (uint32_t size : {1u, 2u, 4u, 8u})
    a.max_active_clusters[plan::cluster_size_index(size)] = resident_clusters(kProbeThreads, kSm90MaxSmemBytes, size);
  return plan::derive_facts(a);
}

// A zeroed record in host-mapped memory, which the host can read after a trap has ended the
// context, and its device address.
template <class Record>
void host_mapped(Record*& host, Record*& device) {
  void* h = nullptr;
  check(cudaHostAlloc(&h, sizeof(Record), cudaHostAllocMapped), "cudaHostAlloc");
  host = static_cast<Record*>(h);
  *host = Record{};
  void* d = nullptr;
  check(cudaHostGetDevicePointer(&d, h, 0), "cudaHostGetDevicePointer");
  device = static_cast<Record*>(d);
}

}  // namespace

// What the GEMMs on each stream keep, made on a stream's first use and never freed: a captured
// graph may replay with any workspace, and a stream's lock must stay where its callers cached it
// (map nodes do not move). The library keeps them until exit.
struct DeviceState::Streams {
  struct Buffer {
    void* data = nullptr;
    uint64_t bytes = 0;
  };
  struct Stream {
    Buffer workspace;
    int32_t counter_pair = -1;  // its pair in `counter_blocks`; -1 until a dynamic GEMM ran on it
    std::mutex launches;        // launch_lock
  };
  std::map<StreamKey, Stream> by_key;
  Buffer spare;  // made by prepare(), taken by a capturing stream without a workspace
  std::vector<void*> retired;
  uint64_t prepared_bytes = 0;
  // Unit counter pairs, zeroed, in blocks of kPairsPerBlock: a block is added when the last is
  // taken (threads that come and go with cudaStreamPerThread each take a pair), and none is
  // freed, as a captured graph may still count in it.
  std::vector<uint32_t*> counter_blocks;
  uint32_t pairs_used = 0;
  static constexpr uint32_t kPairsPerBlock = 256;
};

namespace {

std::mutex& states_mutex() {
  static std::mutex m;
  return m;
}

std::map<int, std::unique_ptr<DeviceState>>& states() {
  static std::map<int, std::unique_ptr<DeviceState>> s;
  return s;
}

}  // namespace

DeviceState& DeviceState::current() {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  std::lock_guard lock(states_mutex());
  auto& s = states()[device];
  if (!s) s.reset(new DeviceState(device));
  return *s;
}

DeviceState* DeviceState::find(int device) {
  std::lock_guard lock(states_mutex());
  auto it = states().find(device);
  return it == states().end() ? nullptr : it->second.get();
}

DeviceState::DeviceState(int device) : device_(device), facts_(read_facts(device)) {
  host_mapped(record_host_, record_device_);
  host_mapped(fault_host_, fault_device_);
  streams_ = new Streams;
  add_counter_block();
  // The process lives on with these: the library keeps them until exit.
}

void DeviceState::add_counter_block() {
  constexpr size_t kBytes = Streams::kPairsPerBlock * 2 * sizeof(uint32_t);
  uint32_t* block = nullptr;
  check(cudaMalloc(reinterpret_cast<void**>(&block), kBytes), "cudaMalloc (unit counters)");
  // Zero before any stream's kernel counts in it, whichever stream that is.
  check(cudaMemset(block, 0, kBytes), "cudaMemset (unit counters)");
  check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize (unit counters)");
  streams_->counter_blocks.push_back(block);
}

DeviceState::UnitCounters DeviceState::unit_counters(const StreamKey& stream) {
  std::lock_guard lock(mutex_);
  Streams::Stream& st = streams_->by_key[stream];
  if (st.counter_pair < 0) {
    const uint32_t per_block = Streams::kPairsPerBlock;
    if (streams_->pairs_used == per_block * streams_->counter_blocks.size()) {
      // A new block is an allocation, which a stream capture (this thread's or, in the global
      // mode, any thread's) forbids.
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      check(cudaStreamIsCapturing(stream.stream, &capture), "cudaStreamIsCapturing");
      if (capture != cudaStreamCaptureStatusNone)
        throw Error("the GEMM's stream is being captured, and its unit counters would need a new allocation (" +
                    std::to_string(streams_->pairs_used) +
                    " streams have run dynamic GEMMs on this device): run one GEMM on the stream before capturing");
      add_counter_block();
    }
    st.counter_pair = static_cast<int32_t>(streams_->pairs_used++);
  }
  const uint32_t pair = static_cast<uint32_t>(st.counter_pair);
  return {streams_->counter_blocks[pair / Streams::kPairsPerBlock] + 2 * (pair % Streams::kPairsPerBlock),
          &st.launches};
}

std::mutex& DeviceState::launch_lock(const StreamKey& stream) {
  std::lock_guard lock(mutex_);
  return streams_->by_key[stream].launches;
}

void* DeviceState::find_workspace(const StreamKey& stream, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  auto it = streams_->by_key.find(stream);
  return it != streams_->by_key.end() && it->second.workspace.bytes >= bytes ? it->second.workspace.data : nullptr;
}

void* DeviceState::grow_workspace(const StreamKey& stream, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  Streams::Buffer& b = streams_->by_key[stream].workspace;
  if (b.bytes >= bytes) return b.data;
  const uint64_t size = std::max(bytes, streams_->prepared_bytes);
  void* data = nullptr;
  check(cudaMalloc(&data, size), "cudaMalloc (split-K workspace)");
  // The fused reduce's tile counters start at zero (plan::kSplitCounterBytes), before this
  // stream's next kernel.
  check(cudaMemsetAsync(data, 0, plan::kSplitCounterBytes, stream.stream), "cudaMemsetAsync (split-K tile counters)");
  if (b.data) streams_->retired.push_back(b.data);
  b = {data, size};
  return data;
}

void DeviceState::note_workspace(uint64_t bytes, bool spare) {
  std::lock_guard lock(mutex_);
  Streams& w = *streams_;
  w.prepared_bytes = std::max(w.prepared_bytes, bytes);
  if (!spare || w.spare.bytes >= w.prepared_bytes) return;
  void* data = nullptr;
  check(cudaMalloc(&data, w.prepared_bytes), "cudaMalloc (split-K workspace)");
  // Zeroed counters for whichever stream adopts it, possibly in a capture: done before returning.
  check(cudaMemset(data, 0, plan::kSplitCounterBytes), "cudaMemset (split-K tile counters)");
  check(cudaStreamSynchronize(cudaStreamLegacy), "cudaStreamSynchronize (split-K tile counters)");
  if (w.spare.data) w.retired.push_back(w.spare.data);
  w.spare = {data, w.prepared_bytes};
}

void* DeviceState::adopt_spare_workspace(const StreamKey& stream, uint64_t bytes) {
  std::lock_guard lock(mutex_);
  Streams& w = *streams_;
  if (w.spare.bytes < bytes) return nullptr;
  Streams::Buffer& b = w.by_key[stream].workspace;
  if (b.data) w.retired.push_back(b.data);  // too small, but a graph may still use it
  b = w.spare;
  w.spare = {};
  return b.data;
}

}  // namespace tilecast::api

namespace tilecast {

std::optional<std::string> take_wait_timeout_report() {
  api::DeviceState& s = api::DeviceState::current();
  volatile WaitTimeoutRecord* r = s.wait_record_host();
  if (r->magic != kWaitTimeoutMagic) return std::nullopt;
  static const char* names[] = {"?",         "full",    "empty",     "empty (teardown)", "unit full",
                                "unit empty", "C full", "C empty", "bias full",        "bias empty",
                                "tile full",  "tile empty", "k-tail ready", "k-tail cleared",
                                "cluster reduce full", "cluster reduce empty"};
  const uint32_t b = r->barrier < std::size(names) ? r->barrier : 0;
  std::string text = "GEMM barrier wait timed out after " + std::to_string(r->timeout_ms) + " ms: " + names[b] +
                     " barrier " + std::to_string(r->index) + " (parity " + std::to_string(r->parity) + "), block " +
                     std::to_string(r->block) + ", thread " + std::to_string(r->thread) + ", cluster rank " +
                     std::to_string(r->cluster_rank);
  r->magic = 0;
  return text;
}

std::optional<std::string> take_layout_fault_report() {
  api::DeviceState& s = api::DeviceState::current();
  volatile LayoutFaultRecord* r = s.layout_fault_record_host();
  if (r->magic != kLayoutFaultMagic) return std::nullopt;
  const std::string i = std::to_string(r->index), v = std::to_string(r->value), o = std::to_string(r->other),
                    bound = std::to_string(r->bound);
  std::string text;
  switch (static_cast<LayoutFault>(r->fault)) {
    case LayoutFault::kMaskedRows:
      text = "m-grouped masked: masked_m[" + i + "] = " + v + " is outside [0, max_m = " + bound + "]";
      break;
    case LayoutFault::kOffsets:
      text = "m-grouped contiguous: expert offsets[" + i + "] = " + v +
             (r->index == 0 ? std::string(": the first offset must be 0")
                            : " (after " + o + "): offsets must not decrease, nor pass the " + bound + " rows of A");
      break;
    case LayoutFault::kExpertIndex:
      text = "m-grouped contiguous: row " + i + " holds expert " + v + ", neither -1 (padding) nor an expert of 0.." +
             std::to_string(static_cast<int64_t>(r->bound) - 1);
      break;
    case LayoutFault::kExpertRun:
      text = "m-grouped contiguous: row " + i + " holds expert " + v + " after row " +
             std::to_string(static_cast<int64_t>(r->index) - 1) + "'s " + o + ": each expert's rows must start on a multiple of " +
             std::to_string(kMGroupedRowAlignment) + " rows and be padded with -1 up to the next";
      break;
    case LayoutFault::kGroupK:
      if (r->value < 0)
        text = "k-grouped: k_sizes[" + i + "] = " + v + " is negative";
      else if (r->value % static_cast<int32_t>(kKGroupAlignment) != 0)
        text = "k-grouped: k_sizes[" + i + "] = " + v + " is not a multiple of " + std::to_string(kKGroupAlignment) +
               " (each group starts on a 16-byte column of A and B, as TMA loads need; pad the group)";
      else
        text = "k-grouped: k_sizes[" + i + "] = " + v + " after " + o + " columns of the groups before it passes K = " + bound;
      break;
    default:
      text = "unknown layout fault " + std::to_string(r->fault);
  }
  text += " (the kernel trapped: block " + std::to_string(r->block) + ", thread " + std::to_string(r->thread) + ")";
  r->magic = 0;
  return text;
}

uint64_t wait_timeout_ns() {
  static const uint64_t ns = [] {
    const char* v = std::getenv("TILECAST_WAIT_TIMEOUT_MS");
    const uint64_t ms = v && *v ? std::strtoull(v, nullptr, 10) : 60000;
    return (ms ? ms : 60000) * 1000000ull;
  }();
  return ns;
}

}  // namespace tilecast
