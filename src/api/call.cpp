// The call path shared by tilecast::gemm and the grouped calls (call.hpp).
//
// A call whose arguments match one this thread made before takes the fast path: its TMA
// descriptors and parameters are reused and it only launches (no validation, no planning, no
// lock). Otherwise: validate (api/validate.cpp), take the prepared plan (api/prepared.cpp: plan,
// compile, load, cached per shape), encode the descriptors, remember the call, launch.
#include "api/call.hpp"

#include <array>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <utility>

#include "api/device_state.hpp"
#include "api/epilogue_only.hpp"
#include "api/prepared.hpp"
#include "api/split_k.hpp"
#include "api/validate.hpp"
#include "jit/launch.hpp"
#include "jit/tma.hpp"
#include "tilecast/device/kernels/gemm_sm90/config.cuh"
#include "tilecast/diagnostics.hpp"

namespace tilecast::api {

jit::TmaL2Promotion operand_promotion(uint8_t box_row_alignment) {
  return plan::starts_off_a_line(box_row_alignment) ? jit::TmaL2Promotion::k128B : jit::TmaL2Promotion::k256B;
}

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw Error(std::string(what) + " failed: " + cudaGetErrorString(e));
}

TmaDescriptor descriptor(const MatrixView& v, const TmaBox& box, jit::TmaSwizzle swizzle,
                         jit::TmaL2Promotion promotion = jit::TmaL2Promotion::k256B) {
  jit::TmaTensor t = jit::tma_tensor(v, box.rows, box.cols, swizzle);
  t.l2_promotion = promotion;
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
  TmaDescriptor a, a_last, b, d, d_narrow, c, c_narrow, bias;  // a_last: the last row of tiles' A
  GemmParams params;
  // Split-K: the GEMM's D is the workspace of the stream it runs on, which the descriptors and
  // parameters name; a call on another stream re-aims them (only this thread's call cache holds
  // the call, hence mutable).
  mutable void* workspace = nullptr;
  mutable cudaStream_t workspace_stream = nullptr;
  mutable std::mutex* launch_lock = nullptr;  // that stream's (DeviceState::launch_lock)
  mutable SplitKReduceParams reduce;
};

// The split GEMM's partial sums in the workspace (after its tile counters): k_splits x batch FP32
// matrices of m x ws_ld.
MatrixView workspace_view(const plan::GemmPlan& plan, void* data) {
  MatrixView v;
  v.data = static_cast<char*>(data) + plan::kSplitCounterBytes;
  v.dtype = DType::kFP32;
  v.rows = plan.desc.problem.m;
  v.cols = plan.desc.problem.n;
  v.row_stride = plan.workspace_ld();
  v.batch = int64_t{plan.k_splits} * plan.desc.problem.num_groups;
  return v;
}

PreparedCall make_call(std::shared_ptr<const PreparedGemm> gemm, const plan::GemmDesc& desc, const CallArgs& args) {
  const MatrixView &a = args.a, &b = args.b, &d = args.d;
  PreparedCall call;
  const GemmGeometry& g = gemm->geometry;
  // Swapped operands: the kernel's A is the caller's B (its 128-row tiles run over N) and its B
  // the caller's A; its epilogue stores D, and reads C and the bias, through pointers.
  const bool swap = gemm->plan.main.kernel.swap_ab;
  // A split kernel that reduces in the GEMM (its last slice, or every slice across the cluster)
  // applies the call's epilogue itself, through pointers.
  const bool reduces_in_gemm = gemm->plan.reduces_in_gemm();
  // The last row of tiles has its own box of A, which stops at M (geometry.cuh, a_last_box_for);
  // where that row is whole, or the box never stops at M, it is A's own descriptor.
  const uint32_t kernel_m = swap ? desc.problem.n : desc.problem.m;
  const TmaBox a_last_box = a_last_box_for(gemm->plan.main.kernel, g, kernel_m);
  const jit::TmaL2Promotion a_promotion = operand_promotion(plan::box_row_alignment(desc, true, swap));
  const jit::TmaL2Promotion b_promotion = operand_promotion(plan::box_row_alignment(desc, false, swap));
  call.a = descriptor(swap ? b : a, g.a_box, jit::TmaSwizzle::k128B, a_promotion);
  call.a_last = a_last_box.rows == g.a_box.rows ? call.a
                                                : descriptor(swap ? b : a, a_last_box, jit::TmaSwizzle::k128B, a_promotion);
  call.b = descriptor(swap ? a : b, g.b_box, jit::TmaSwizzle::k128B, b_promotion);
  if (swap || gemm->plan.k_splits > 1) {
    // Descriptors the kernel never reads: a split kernel has no C and no bias and its D is the
    // workspace (aim_at_workspace), or (summing in the GEMM) it reads and writes through pointers, as a swapped
    // one does.
    call.d = call.d_narrow = call.c = call.c_narrow = call.bias = call.a;
  } else {
    call.d = descriptor(d, g.d_box, jit::TmaSwizzle::k128B);
    call.d_narrow = g.narrow_slab_cols ? descriptor(d, g.d_narrow_box, jit::TmaSwizzle::kNone) : call.d;
    call.c = desc.has_c ? descriptor(args.c, g.c_box, jit::TmaSwizzle::k128B) : call.d;
    call.c_narrow = desc.has_c && g.narrow_slab_cols ? descriptor(args.c, g.c_narrow_box, jit::TmaSwizzle::kNone) : call.d;
    call.bias = desc.has_bias ? bias_descriptor(args.bias, g.bias_box) : call.d;
  }

  GemmParams& p = call.params;
  p.problem = desc.problem;  // with this call's group data: the cached plan holds sizes only
  if (swap) std::swap(p.problem.m, p.problem.n);  // the kernel walks D^T (GemmPlan::kernel_problem)
  p.problem.k_splits = gemm->plan.k_splits;
  p.schedule = gemm->plan.schedule;
  p.num_clusters = gemm->plan.main.clusters;
  p.a_last_stage_tx_bytes = stage_tx_bytes(g, a_last_box);
  p.alpha = args.alpha;
  p.beta = args.beta;
  p.d_ptr = d.data;
  p.ldd = static_cast<uint64_t>(d.ld());
  p.d_batch = static_cast<uint64_t>(d.batch_step());
  if ((swap || reduces_in_gemm) && desc.has_c) {
    p.c_ptr = args.c.data;
    p.ldc = static_cast<uint64_t>(args.c.ld());
    p.c_batch = static_cast<uint64_t>(args.c.batch_step());
  }
  if ((swap || reduces_in_gemm) && desc.has_bias) p.bias_ptr = args.bias.data;
  p.wait = wait_bound(wait_timeout_ns(), gemm->device->wait_record_device());
  p.layout_fault = gemm->device->layout_fault_record_device();
  if (gemm->plan.companion) p.total_clusters = gemm->plan.main.clusters + gemm->plan.companion->clusters;
  if (gemm->plan.k_splits > 1 && !reduces_in_gemm) {
    // The GEMM stores plain partial sums (its kernel has no C and no bias); the reduce kernel
    // applies the call's epilogue. D's descriptors and pointer are the workspace's, set at launch.
    p.alpha = 1.0f;
    p.beta = 0.0f;
    SplitKReduceParams& r = call.reduce;
    const plan::GemmPlan& plan = gemm->plan;
    r.k_splits = plan.k_splits;
    r.batches = plan.desc.problem.num_groups;
    r.m = plan.desc.problem.m;
    r.n = plan.desc.problem.n;
    r.ws_ld = plan.workspace_ld();
    r.ws_batch = r.ws_ld * r.m;
    r.ws_slice = r.ws_batch * r.batches;
    r.d = d.data;
    r.ldd = static_cast<uint64_t>(d.ld());
    r.d_batch = static_cast<uint64_t>(d.batch_step());
    if (desc.has_c) {
      r.c = args.c.data;
      r.ldc = static_cast<uint64_t>(args.c.ld());
      r.c_batch = static_cast<uint64_t>(args.c.batch_step());
    }
    r.bias = desc.has_bias ? args.bias.data : nullptr;
    r.alpha = args.alpha;
    r.beta = args.beta;
  }
  call.gemm = std::move(gemm);
  return call;
}

bool capturing(cudaStream_t stream);

// Points a split call at `stream`'s workspace and launch lock: from the device's per-stream
// buffers, grown (by a new allocation) only outside a capture. A call aimed at this stream before
// keeps its buffer without asking the device (and taking its mutex): it was large enough, buffers
// are never freed, and no other stream is ever given one that was this stream's (the call cache
// is this thread's, so cudaStreamPerThread names one stream here too).
void aim_at_workspace(const PreparedCall& call, cudaStream_t stream) {
  if (call.workspace && call.workspace_stream == stream) return;
  const PreparedGemm& g = *call.gemm;
  const uint64_t bytes = g.plan.workspace_bytes();
  const StreamKey key = stream_key(stream);
  void* ws = g.device->find_workspace(key, bytes);
  if (!ws) {
    if (capturing(stream)) {
      ws = g.device->adopt_spare_workspace(key, bytes);
      if (!ws)
        throw Error("gemm: split-K needs a workspace of " + std::to_string(bytes) +
                    " bytes on the capturing stream, which has none that large, and no spare is left (allocating "
                    "cannot be captured): call tilecast::prepare() again before this capture (each prepare() of a "
                    "split problem readies one spare workspace for a capturing stream), run the call once on this "
                    "stream first, or pass config k_splits=1");
    } else {
      ws = g.device->grow_workspace(key, bytes);
    }
  }
  call.workspace_stream = stream;
  call.launch_lock = &g.device->launch_lock(key);
  if (ws == call.workspace) return;
  const MatrixView v = workspace_view(g.plan, ws);
  PreparedCall& c = const_cast<PreparedCall&>(call);
  call.workspace = ws;
  if (g.plan.main.kernel.fused_reduce) {
    // D, C and the bias stay the call's; the partial sums and the tile counters go here.
    c.params.workspace = static_cast<float*>(v.data);
    c.params.ws_ld = static_cast<uint64_t>(v.ld());
    c.params.ws_batch = static_cast<uint64_t>(v.batch_step());
    c.params.ws_slice = c.params.ws_batch * g.plan.desc.problem.num_groups;
    c.params.tile_counters = static_cast<uint32_t*>(ws);
    return;
  }
  c.d = descriptor(v, g.geometry.d_box, jit::TmaSwizzle::k128B);
  c.d_narrow = g.geometry.narrow_slab_cols ? descriptor(v, g.geometry.d_narrow_box, jit::TmaSwizzle::kNone) : c.d;
  c.c = c.c_narrow = c.bias = c.d;  // never read: the split kernel has no C and no bias
  c.params.d_ptr = v.data;  // the element-by-element slabs and the swapped kernel store through it
  c.params.ldd = static_cast<uint64_t>(v.ld());
  c.params.d_batch = static_cast<uint64_t>(v.batch_step());
  call.reduce.workspace = static_cast<const float*>(v.data);
}

// Whether GEMM kernels launch programmatically behind the stream's previous kernel (programmatic
// dependent launch): their CTAs become resident and set up while that kernel finishes, and wait
// (griddepcontrol.wait, kernel.cuh) before touching global memory. TILECAST_PDL=0 turns it off;
// read once per process.
bool programmatic_launch() {
  static const bool on = [] {
    const char* v = std::getenv("TILECAST_PDL");
    return v == nullptr || std::strcmp(v, "0") != 0;
  }();
  return on;
}

jit::LaunchConfig launch_config(const PreparedGemm& g, const plan::KernelLaunch& l, cudaStream_t stream) {
  const uint32_t cs = l.kernel.cluster.size() * l.kernel.k_cluster;  // a k_cluster launch's clusters are its slices
  return {dim3(l.clusters * cs), dim3(g.geometry.threads), dim3(cs), g.geometry.smem.launch_bytes, stream,
          programmatic_launch()};
}

void launch(const PreparedCall& call, cudaStream_t stream) {
  const PreparedGemm& g = *call.gemm;
  const plan::GemmPlan& plan = g.plan;
  if (plan.k_splits > 1) {
    // Summed across each cluster, no workspace; else the partial sums (or the fused reduce's) go there.
    if (plan.main.kernel.k_cluster == 1) aim_at_workspace(call, stream);
    const bool two_launches = plan.launches_reduce_kernel();  // else the GEMM sums every tile's slices
    std::unique_lock<std::mutex> hold;
    if (two_launches) hold = std::unique_lock(*call.launch_lock);
    jit::launch_kernel(*g.main, launch_config(g, plan.main, stream), call.a, call.a_last, call.b, call.d,
                       call.d_narrow, call.c, call.c_narrow, call.bias, call.params);
    if (!two_launches) return;
    // Behind the GEMM programmatically: its launch overlaps the GEMM's run (split_k_reduce.cuh).
    const jit::LaunchConfig rc{dim3(split_k_reduce_ctas(call.reduce, g.device->facts().num_sms)),
                               dim3(kReduceThreads), dim3(1), 0, stream, true};
    jit::launch_kernel(*g.reduce, rc, call.reduce);
    return;
  }
  if (!plan.companion) {
    jit::launch_kernel(*g.main, launch_config(g, plan.main, stream), call.a, call.a_last, call.b, call.d,
                       call.d_narrow, call.c, call.c_narrow, call.bias, call.params);
    return;
  }
  // Both launches claim units from one counter pair, kept per stream. The companion goes behind the
  // main launch on the same stream, programmatically: it becomes resident on the SMs the main grid
  // leaves idle once every main CTA has started (kernel.cuh says so at its start), and it waits for
  // the main grid before it exits, so what follows on the stream follows both. (It went on a side
  // stream forked and joined with events before, under a lock shared by every stream; either way
  // a companion with nothing to do costs about 2.3 us, which the dynamic kernels take:
  // bench/results/2026-12-03-h200-companion.md.)
  GemmParams main = call.params;
  const DeviceState::UnitCounters counters = g.device->unit_counters(stream_key(stream));
  std::lock_guard hold(*counters.launches);
  main.unit_counter = counters.pair;
  main.done_counter = counters.pair + 1;
  GemmParams side = main;
  side.num_clusters = plan.companion->clusters;
  jit::launch_kernel(*g.main, launch_config(g, plan.main, stream), call.a, call.a_last, call.b, call.d,
                     call.d_narrow, call.c, call.c_narrow, call.bias, main);
  jit::LaunchConfig behind = launch_config(g, *plan.companion, stream);
  behind.after_previous_programmatically = true;
  jit::launch_kernel(*g.companion, behind, call.a, call.a_last, call.b, call.d, call.d_narrow, call.c, call.c_narrow,
                     call.bias, side);
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

// That `stream` belongs to `device`, for every call (the call cache is keyed on the arguments,
// not on the stream), asked of the runtime once per stream and thread. Not while the stream
// captures: cudaStreamGetDevice is refused then and invalidates the capture (measured on the
// H200), so a stream first met inside a capture goes unchecked here; a launch onto another
// device's stream still fails with a CUDA error at the launch.
void check_stream_once(cudaStream_t stream, int device) {
  thread_local cudaStream_t checked_stream = nullptr;
  thread_local int checked_device = -1;
  if (stream == checked_stream && device == checked_device) return;
  if (capturing(stream)) return;
  check_stream(stream, device, query_stream_device);
  checked_stream = stream;
  checked_device = device;
}

}  // namespace

void run_call(const CallArgs& args, cudaStream_t stream) {
  const CallKey key = call_key(args);
  check_stream_once(stream, key.device);
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
  const PreparedCall* call = thread_calls().find(key);
  if (!call) {
    const plan::GemmDesc desc = validate_call(args, query_pointer);
    if (nothing_to_do(desc)) return;
    // The epilogue-only kernel is compiled into the library: loading it is all there is to prepare.
    if (epilogue_only(desc)) return load_epilogue_only(args.d, args.bias);
    call = &remember(key, desc, false);
  }
  // A spare workspace for a capture on a stream that never ran a split call (a graph captured on
  // a fresh stream right after prepare(), as torch.cuda.graph does): made by every prepare().
  const plan::GemmPlan& plan = call->gemm->plan;
  if (plan.workspace_bytes() > 0) call->gemm->device->note_workspace(plan.workspace_bytes(), true);
}

}  // namespace tilecast::api
