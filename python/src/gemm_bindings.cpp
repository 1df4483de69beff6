// tilecast::gemm and tilecast::prepare (with the epilogue: alpha, beta, C, bias) for DLPack
// tensors. The Python layer (tilecast/_gemm.py) picks the stream and the allocator of the caller's
// framework; everything about the operands is checked here, once, in this order: ranks, dtypes and
// strides, shapes (and the epilogue's scalars), devices, then the config's own rules. `out` is
// allocated (through the caller's allocator) only after all of them passed.
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <sstream>
#include <string>

#include "bindings.hpp"
#include "device_guard.hpp"
#include "tensor_view.hpp"
#include "tilecast/diagnostics.hpp"
#include "tilecast/gemm.hpp"
#include "tilecast/plan/gemm_plan.hpp"

namespace tilecast::python {
namespace nb = nanobind;
namespace {

std::string dims_text(const MatrixView& v, bool batched, const char* r, const char* c) {
  std::string s = "[";
  if (batched) s += "batch=" + std::to_string(v.batch) + ", ";
  return s + r + "=" + std::to_string(v.rows) + ", " + c + "=" + std::to_string(v.cols) + "]";
}

struct Operands {
  MatrixView a, b, d, c;
  bool has_c = false;
  VectorView bias;  // none when data is null
  int device = 0;
  bool empty = false;  // m, n or batch is 0: nothing to compute
};

// Checks the operands and returns their views; allocates `out` through `alloc` when it is None.
Operands check_operands(const char* where, const Tensor& a, const Tensor& b, nb::object& out,
                        const std::optional<Tensor>& c, const std::optional<Tensor>& bias, float beta,
                        const std::optional<std::string>& out_dtype, const GemmConfig& config,
                        const nb::object& alloc) {
  check_rank(where, "a", a);
  check_rank(where, "b", b, a.ndim());
  const bool batched = a.ndim() == 3;
  Operands o;
  o.a = matrix_view(where, "a", a, Allowed::kBF16);
  o.b = matrix_view(where, "b", b, Allowed::kBF16);
  if (bias) o.bias = bias_vector(where, "bias", *bias);
  if (o.a.cols != o.b.cols || o.a.batch != o.b.batch)
    throw nb::value_error((std::string("tilecast.") + where + ": a is " + dims_text(o.a, batched, "m", "k") + " but b is " +
                           dims_text(o.b, batched, "n", "k") + ": they must agree on k" + (batched ? " and batch" : "") +
                           " (D = A @ B^T, B is [n, k])")
                              .c_str());
  const auto check_output_shape = [&](const char* name, const MatrixView& v) {
    if (v.rows != o.a.rows || v.cols != o.b.rows || v.batch != o.a.batch) {
      MatrixView want = o.a;
      want.cols = o.b.rows;
      throw nb::value_error((std::string("tilecast.") + where + ": " + name + " is " + dims_text(v, batched, "m", "n") +
                             ", expected " + dims_text(want, batched, "m", "n"))
                                .c_str());
    }
  };
  std::optional<DType> d_type;
  if (out_dtype) d_type = *out_dtype == "float32" ? DType::kFP32 : DType::kBF16;
  if (c) {
    check_rank(where, "c", *c, a.ndim());
    o.c = matrix_view(where, "c", *c, Allowed::kBF16OrFP32);
    check_output_shape("c", o.c);
    o.has_c = true;
  } else if (beta != 1.0f) {
    std::ostringstream text;
    text << beta;
    throw nb::value_error((std::string("tilecast.") + where + ": beta is " + text.str() +
                           " but there is no c: beta scales c (give c, or leave beta at 1)")
                              .c_str());
  }
  if (bias && o.bias.length != o.b.rows)
    throw nb::value_error((std::string("tilecast.") + where + ": bias has " + std::to_string(o.bias.length) +
                           " elements, expected n = " + std::to_string(o.b.rows) + " (one per column of the output)")
                              .c_str());
  std::optional<Tensor> d_tensor;
  if (!out.is_none()) {
    d_tensor = tensor_arg(where, "out", out);
    check_rank(where, "out", *d_tensor, a.ndim());
    o.d = matrix_view(where, "out", *d_tensor, Allowed::kBF16OrFP32);
    check_output_shape("out", o.d);
    if (d_type && *d_type != o.d.dtype)
      throw nb::type_error((std::string("tilecast.") + where + ": out is " + dtype_text(*d_tensor) + " but out_dtype is " +
                            *out_dtype)
                               .c_str());
    d_type = o.d.dtype;
  }
  if (!d_type) d_type = o.has_c ? o.c.dtype : DType::kBF16;
  if (o.has_c && o.c.dtype != *d_type)
    throw nb::type_error((std::string("tilecast.") + where + ": c is " + dtype_text(*c) + " but the output is " +
                          (*d_type == DType::kFP32 ? "float32" : "bfloat16") + ": c must have the output's dtype")
                             .c_str());

  o.device = check_cuda(where, "a", a);
  check_cuda(where, "b", b, o.device);
  if (c) check_cuda(where, "c", *c, o.device);
  if (bias) check_cuda(where, "bias", *bias, o.device);
  if (d_tensor) check_cuda(where, "out", *d_tensor, o.device);
  // The C++ API's first check, made here too: an empty problem returns before the call (and must
  // still get it, as the API's own empty calls do), and a refused call allocates nothing.
  plan::check_overrides(config);

  if (!d_tensor) {
    const nb::str dtype(*d_type == DType::kFP32 ? "float32" : "bfloat16");
    const nb::tuple shape = batched ? nb::make_tuple(o.a.batch, o.a.rows, o.b.rows) : nb::make_tuple(o.a.rows, o.b.rows);
    out = alloc(shape, dtype);
    const Tensor d = tensor_arg(where, "the allocated out", out);
    o.d = matrix_view(where, "out", d, Allowed::kBF16OrFP32);
    check_output_shape("the allocated out", o.d);
    check_cuda(where, "the allocated out", d, o.device);
  }
  o.empty = o.a.rows == 0 || o.b.rows == 0 || o.a.batch == 0;
  return o;
}

GemmEpilogue epilogue_of(const Operands& o, float alpha, float beta) {
  GemmEpilogue e;
  e.c = o.has_c ? &o.c : nullptr;
  e.alpha = alpha;
  e.beta = beta;
  e.bias = o.bias;
  return e;
}

nb::object gemm_nt(const Tensor& a, const Tensor& b, nb::object out, const std::optional<Tensor>& c,
                   const std::optional<Tensor>& bias, float alpha, float beta,
                   const std::optional<std::string>& out_dtype, const GemmConfig& config, uintptr_t stream,
                   const nb::object& alloc) {
  const Operands o = check_operands("gemm_nt", a, b, out, c, bias, beta, out_dtype, config, alloc);
  if (o.empty) return out;
  {
    nb::gil_scoped_release unlocked;  // the first call of a shape compiles for seconds
    DeviceGuard device(o.device);
    gemm(o.a, o.b, o.d, reinterpret_cast<cudaStream_t>(stream), epilogue_of(o, alpha, beta), config);
  }
  return out;
}

nb::object prepare_nt(const Tensor& a, const Tensor& b, nb::object out, const std::optional<Tensor>& c,
                      const std::optional<Tensor>& bias, float alpha, float beta,
                      const std::optional<std::string>& out_dtype, const GemmConfig& config, const nb::object& alloc) {
  const Operands o = check_operands("prepare", a, b, out, c, bias, beta, out_dtype, config, alloc);
  if (o.empty) return out;
  {
    nb::gil_scoped_release unlocked;
    DeviceGuard device(o.device);
    prepare(o.a, o.b, o.d, epilogue_of(o, alpha, beta), config);
  }
  return out;
}

}  // namespace

void bind_gemm(nb::module_& m) {
  using namespace nb::literals;
  m.def("gemm_nt", &gemm_nt, "a"_a, "b"_a, "out"_a.none(), "c"_a.none(), "bias"_a.none(), "alpha"_a, "beta"_a,
        "out_dtype"_a.none(), "config"_a, "stream"_a, "alloc"_a,
        "D = alpha * A @ B^T + beta * C + bias on `stream`; checks every operand, allocates `out` through "
        "alloc(shape, dtype) when it is None, and returns it. Use tilecast.gemm_nt.");
  m.def("prepare", &prepare_nt, "a"_a, "b"_a, "out"_a.none(), "c"_a.none(), "bias"_a.none(), "alpha"_a, "beta"_a,
        "out_dtype"_a.none(), "config"_a, "alloc"_a,
        "Plans, compiles and loads what gemm_nt with these operands needs. Use tilecast.prepare.");
  m.def(
      "stream_synchronize",
      [](uintptr_t stream, int device) {
        cudaError_t e;
        {
          nb::gil_scoped_release unlocked;
          // The legacy default stream (0) is the current device's, and a call makes its operands'
          // device current only while it runs: the wait makes it current again.
          std::optional<DeviceGuard> on;
          if (device >= 0) on.emplace(device);
          e = cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream));
        }
        if (e != cudaSuccess) throw Error(std::string("cudaStreamSynchronize failed: ") + cudaGetErrorString(e));
      },
      "stream"_a, "device"_a = -1,
      "Waits for `stream` of `device` (-1: the current one), for callers whose framework cannot be told "
      "about it, like JAX.");
  m.def(
      "take_layout_fault_report", [] { return take_layout_fault_report(); },
      "After a grouped GEMM's kernel trapped on group data the problem cannot mean (its CUDA error "
      "surfaces at the next synchronisation): which entry was wrong, as text, clearing the record; "
      "None when no kernel trapped. The trap ends the process's CUDA context.");
  m.def(
      "take_wait_timeout_report", [] { return take_wait_timeout_report(); },
      "After a GEMM barrier wait timed out and trapped (TILECAST_WAIT_TIMEOUT_MS): which barrier, stage, "
      "block and thread waited, clearing the record; None when no wait timed out.");
}

}  // namespace tilecast::python
