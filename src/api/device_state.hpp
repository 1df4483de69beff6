// What the GEMM API keeps per device: its facts for the planner, unit counters for dynamic
// scheduling, and the host-mapped records a timed-out barrier wait and impossible group data
// write. Made by the first call or prepare() for a device, never under stream capture (it
// allocates): a captured call that would make it is refused (see gemm.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <mutex>

#include "api/stream_key.hpp"
#include "tilecast/device/kernels/gemm_sm90/layout_fault.cuh"
#include "tilecast/device/pipeline/mbarrier.cuh"
#include "tilecast/plan/device_facts.hpp"

namespace tilecast::api {

class DeviceState {
 public:
  // The state of the current device, made on first use.
  static DeviceState& current();
  // The state of `device` if it has been made, else null.
  static DeviceState* find(int device);

  const plan::DeviceFacts& facts() const { return facts_; }
  int device() const { return device_; }
  WaitTimeoutRecord* wait_record_device() const { return record_device_; }
  WaitTimeoutRecord* wait_record_host() const { return record_host_; }
  LayoutFaultRecord* layout_fault_record_device() const { return fault_device_; }
  LayoutFaultRecord* layout_fault_record_host() const { return fault_host_; }
  // A pair of counters (next unit, finished clusters), zero between GEMMs, for the GEMMs that run
  // on `stream`, and the lock its main and companion launches are enqueued under. Pairs are kept
  // per stream so that GEMMs on concurrent streams never share one.
  struct UnitCounters {
    uint32_t* pair = nullptr;
    std::mutex* launches = nullptr;
  };
  UnitCounters unit_counters(const StreamKey& stream);
  // What a call of two launches on `stream` (a split GEMM and its reduce kernel, a main launch and
  // its companion) holds while it enqueues them: another thread's call on the same stream must not
  // land between them, where it would write the same workspace or claim from the same counters.
  std::mutex& launch_lock(const StreamKey& stream);
  // The split-K workspace of the GEMMs on `stream`, if it holds `bytes`; else null. Workspaces are
  // kept per stream, so that split GEMMs on concurrent streams never share one (a graph captured
  // from a stream uses that stream's).
  void* find_workspace(const StreamKey& stream, uint64_t bytes);
  // Makes `stream`'s workspace hold `bytes` (and at least what every prepared plan needs), by a
  // new allocation: never under capture (the caller checks). The old buffer is kept alive, as a
  // captured graph may still use it.
  void* grow_workspace(const StreamKey& stream, uint64_t bytes);
  // A prepared plan's workspace size: every new workspace holds the largest. With `spare`
  // (tilecast::prepare), also one spare workspace that large, allocated now, for the next
  // capturing stream that has none.
  void note_workspace(uint64_t bytes, bool spare);
  // Under capture: gives `stream` the spare workspace (no allocation) if it holds `bytes`; else
  // null. The stream keeps it; the next prepare() makes another spare.
  void* adopt_spare_workspace(const StreamKey& stream, uint64_t bytes);

 private:
  explicit DeviceState(int device);
  void add_counter_block();  // under mutex_, or in the constructor
  int device_;
  plan::DeviceFacts facts_;
  WaitTimeoutRecord* record_host_ = nullptr;
  WaitTimeoutRecord* record_device_ = nullptr;
  LayoutFaultRecord* fault_host_ = nullptr;
  LayoutFaultRecord* fault_device_ = nullptr;
  std::mutex mutex_;
  struct Streams;  // per stream: its workspace, its unit counters, its launch lock
  Streams* streams_ = nullptr;
};

}  // namespace tilecast::api
