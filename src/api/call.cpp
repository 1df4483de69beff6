// The call path shared by tilecast::gemm and the grouped calls (call.hpp).
//
// A call whose arguments match one this thread made before takes the fast path: its TMA
// descriptors and parameters are reused and it only launches (no validation, no planning, no
// lock). Otherwise: validate (api/validate.cpp), take the prepared plan (api/prepared.cpp: plan,
// compile, load, cached per shape), encode the descriptors, remember the call, launch.
#include "api/call.hpp"

#include <array>
#include <cstring>
#include <memory>

#include "api/epilogue_only.hpp"
#include "api/prepared.hpp"
#include "api/validate.hpp"
#include "jit/launch.hpp"
#include "jit/tma.hpp"
#include "tilecast/device/kernels/gemm_sm90/config.cuh"
#include "tilecast/diagnostics.hpp"

namespace tilecast::api {
namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + " failed: " + cudaGetErrorString(e));
}

TmaDescriptor descriptor(const MatrixView& v, const TmaBox& box, jit::TmaSwizzle swizzle) {
  const jit::TmaTensor t = jit::tma_3d(v.data, v.dtype, static_cast<uint64_t>(v.batch), static_cast<uint64_t>(v.rows),
                                       static_cast<uint64_t>(v.cols), static_cast<uint64_t>(v.ld()),
                                       static_cast<uint64_t>(v.batch_step()), 1, box.rows, box.cols, swizzle);
  const CUtensorMap map = jit::make_tensor_map(t);
  static_assert(sizeof(map) == sizeof(TmaDescriptor));
  TmaDescriptor d;
  std::memcpy(&d, &map, sizeof d);
  return d;
}

// The bias vector as a tensor of one row (3-D like every other: the kernel loads it with the same
// 3-D TMA instruction), whose box is one tile's columns.
TmaDescriptor bias_descriptor(const VectorView& bias, const TmaBox& box) {
  const uint64_t n = static_cast<uint64_t>(bias.length), elem = dtype_size(bias.dtype);
  const uint64_t row_stride = (n * elem + 15) / 16 * 16 / elem;  // one row: any 16-byte multiple will do
  const jit::TmaTensor t = jit::tma_3d(bias.data, bias.dtype, 1, 1, n, row_stride, row_stride, 1, box.rows, box.cols,
                                       jit::TmaSwizzle::kNone);
  const CUtensorMap map = jit::make_tensor_map(t);
  TmaDescriptor desc;
  std::memcpy(&desc, &map, sizeof desc);
  return desc;
}

// Everything a launch needs, made once per distinct call. Descriptors a kernel does not read (C
// without C, narrow ones without a narrow slab, bias without one) repeat D's.
struct PreparedCall {
  std::shared_ptr<const PreparedGemm> gemm;
  TmaDescriptor a, b, d, d_narrow, c, c_narrow, bias;
  GemmParams params;
};

PreparedCall make_call(std::shared_ptr<const PreparedGemm> gemm, const plan::GemmDesc& desc, const CallArgs& args) {
  const MatrixView &a = args.a, &b = args.b, &d = args.d;
  PreparedCall call;
  const GemmGeometry& g = gemm->geometry;
  call.a = descriptor(a, g.a_box, jit::TmaSwizzle::k128B);
  call.b = descriptor(b, g.b_box, jit::TmaSwizzle::k128B);
  call.d = descriptor(d, g.d_box, jit::TmaSwizzle::k128B);
  call.d_narrow = g.narrow_slab_cols ? descriptor(d, g.d_narrow_box, jit::TmaSwizzle::kNone) : call.d;
  call.c = desc.has_c ? descriptor(args.c, g.c_box, jit::TmaSwizzle::k128B) : call.d;
  call.c_narrow = desc.has_c && g.narrow_slab_cols ? descriptor(args.c, g.c_narrow_box, jit::TmaSwizzle::kNone) : call.d;
  call.bias = desc.has_bias ? bias_descriptor(args.bias, g.bias_box) : call.d;

  GemmParams& p = call.params;
  p.problem = desc.problem;  // with this call's group data: the cached plan holds sizes only
  p.schedule = gemm->plan.schedule;
  p.num_clusters = gemm->plan.main.clusters;
  p.alpha = args.alpha;
  p.beta = args.beta;
  p.d_ptr = d.data;
  p.ldd = static_cast<uint64_t>(d.ld());
  p.d_batch = static_cast<uint64_t>(d.batch_step());
  p.wait = wait_bound(wait_timeout_ns(), gemm->device->wait_record_device());
  p.layout_fault = gemm->device->layout_fault_record_device();
  if (gemm->plan.companion) p.total_clusters = gemm->plan.main.clusters + gemm->plan.companion->clusters;
  call.gemm = std::move(gemm);
  return call;
}

jit::LaunchConfig launch_config(const PreparedGemm& g, const plan::KernelLaunch& l, cudaStream_t stream) {
  const uint32_t cs = l.kernel.cluster.size();
  return {dim3(l.clusters * cs), dim3(g.geometry.threads), dim3(cs), g.geometry.smem.launch_bytes, stream};
}

void launch(const PreparedCall& call, cudaStream_t stream) {
  const PreparedGemm& g = *call.gemm;
  const plan::GemmPlan& plan = g.plan;
  if (!plan.companion) {
    jit::launch_kernel(*g.main, launch_config(g, plan.main, stream), call.a, call.b, call.d, call.d_narrow, call.c,
                       call.c_narrow, call.bias, call.params);
    return;
  }
  // Both launches claim units from one counter pair, kept per stream.
  DeviceState& dev = *g.device;
  GemmParams main = call.params;
  uint32_t* counters = dev.unit_counters(stream);
  main.unit_counter = counters;
  main.done_counter = counters + 1;
  GemmParams side = main;
  side.num_clusters = plan.companion->clusters;
  std::lock_guard lock(dev.launch_mutex());
  check(cudaEventRecord(dev.fork_event(), stream), "cudaEventRecord");
  check(cudaStreamWaitEvent(dev.side_stream(), dev.fork_event(), 0), "cudaStreamWaitEvent");
  jit::launch_kernel(*g.main, launch_config(g, plan.main, stream), call.a, call.b, call.d, call.d_narrow, call.c,
                     call.c_narrow, call.bias, main);
  jit::launch_kernel(*g.companion, launch_config(g, *plan.companion, dev.side_stream()), call.a, call.b, call.d,
                     call.d_narrow, call.c, call.c_narrow, call.bias, side);
  check(cudaEventRecord(dev.join_event(), dev.side_stream()), "cudaEventRecord");
  check(cudaStreamWaitEvent(stream, dev.join_event(), 0), "cudaStreamWaitEvent");
}

// A call as the fast path recognises it: every argument, and the device.
struct CallKey {
  CallArgs args;
  int device = 0;
  bool operator==(const CallKey&) const = default;
};

// The calls this thread made last, most recent first; a small array searched in order, so a hit
// costs a few comparisons and takes no lock.
class CallCache {
 public:
  static constexpr size_t kCalls = 16;

  const PreparedCall* find(const CallKey& key) {
    for (size_t i = 0; i < size_; ++i) {
      if (!(keys_[i] == key)) continue;
      if (i != 0) {
        std::swap(keys_[i], keys_[0]);
        std::swap(calls_[i], calls_[0]);
      }
      return &calls_[0];
    }
    return nullptr;
  }
  const PreparedCall& insert(const CallKey& key, PreparedCall call) {
    if (size_ < kCalls) ++size_;
    for (size_t i = size_ - 1; i > 0; --i) {
      keys_[i] = std::move(keys_[i - 1]);
      calls_[i] = std::move(calls_[i - 1]);
    }
    keys_[0] = key;
    calls_[0] = std::move(call);
    return calls_[0];
  }

 private:
  std::array<CallKey, kCalls> keys_{};
  std::array<PreparedCall, kCalls> calls_{};
  size_t size_ = 0;
};

CallCache& thread_calls() {
  thread_local CallCache cache;
  return cache;
}

CallKey call_key(const CallArgs& args) {
  CallKey key{args, 0};
  check(cudaGetDevice(&key.device), "cudaGetDevice");
  return key;
}

// Whether `stream` is capturing a CUDA graph. An error (the legacy stream while another stream
// captures in global mode) counts as capturing: the caller then must not compile either.
bool capturing(cudaStream_t stream) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  if (cudaStreamIsCapturing(stream, &status) != cudaSuccess) {
    cudaGetLastError();
    return true;
  }
  return status != cudaStreamCaptureStatusNone;
}

// Plans, compiles and loads a validated call's kernels, encodes its descriptors and remembers it.
const PreparedCall& remember(const CallKey& key, const plan::GemmDesc& desc, bool under_capture) {
  return thread_calls().insert(key, make_call(prepared_gemm(desc, key.args.config, under_capture), desc, key.args));
}

}  // namespace

void run_call(const CallArgs& args, cudaStream_t stream) {
  const CallKey key = call_key(args);
  // Every call, the cached ones too: the cache is keyed on the arguments, not on the stream.
  check_stream(stream, key.device, query_stream_device);
  if (const PreparedCall* hit = thread_calls().find(key)) return launch(*hit, stream);
  const plan::GemmDesc desc = validate_call(args, query_pointer);
  // Neither kind is cached: it has no plan or descriptors to keep, and validating it again costs
  // microseconds.
  if (nothing_to_do(desc)) return;
  if (epilogue_only(desc))
    return launch_epilogue_only(args.d, args.has_c ? &args.c : nullptr, args.beta, args.bias, stream);
  launch(remember(key, desc, capturing(stream)), stream);
}

void prepare_call(const CallArgs& args) {
  const CallKey key = call_key(args);
  if (thread_calls().find(key)) return;
  const plan::GemmDesc desc = validate_call(args, query_pointer);
  if (nothing_to_do(desc)) return;
  // The epilogue-only kernel is compiled into the library: loading it is all there is to prepare.
  if (epilogue_only(desc)) return load_epilogue_only(args.d, args.bias);
  remember(key, desc, false);
}

}  // namespace tilecast::api
