// tilecast::gemm and tilecast::prepare for DLPack tensors. The Python layer (tilecast/_gemm.py)
// picks the stream and the allocator of the caller's framework; everything about the operands is
// checked here, once, in this order: ranks, dtypes and strides, shapes, devices. `out` is allocated
// (through the caller's allocator) only after all of them passed.
#include <cuda_runtime_api.h>
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <optional>
#include <string>

#include "bindings.hpp"
#include "tensor_view.hpp"
#include "tilecast/gemm.hpp"

namespace tilecast::python {
namespace nb = nanobind;
namespace {

// Makes `device` current for the call (the caller's framework may have another one current) and
// restores the previous one after.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    int current = -1;
    if (cudaGetDevice(&current) == cudaSuccess && current == device) return;
    cudaGetLastError();
    if (cudaSetDevice(device) != cudaSuccess) {
      cudaGetLastError();
      throw Error("cudaSetDevice(" + std::to_string(device) + ") failed");
    }
    previous_ = current;
  }
  ~DeviceGuard() {
    if (previous_ >= 0) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

std::string dims_text(const MatrixView& v, bool batched, const char* r, const char* c) {
  std::string s = "[";
  if (batched) s += "batch=" + std::to_string(v.batch) + ", ";
  return s + r + "=" + std::to_string(v.rows) + ", " + c + "=" + std::to_string(v.cols) + "]";
}

struct Operands {
  MatrixView a, b, d, c;
  bool has_c = false;
  int device = 0;
  bool empty = false;  // m, n or batch is 0: nothing to compute
};

// Checks the operands and returns their views; allocates `out` through `alloc` when it is None.
Operands check_operands(const char* where, const Tensor& a, const Tensor& b, nb::object& out,
                        const std::optional<Tensor>& c, const std::optional<std::string>& out_dtype,
                        const nb::object& alloc) {
  check_rank(where, "a", a);
  check_rank(where, "b", b, a.ndim());
  const bool batched = a.ndim() == 3;
  Operands o;
  o.a = matrix_view(where, "a", a, Allowed::kBF16);
  o.b = matrix_view(where, "b", b, Allowed::kBF16);
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
  }
  std::optional<Tensor> d_tensor;
  if (!out.is_none()) {
    d_tensor = nb::cast<Tensor>(out);
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
  if (d_tensor) check_cuda(where, "out", *d_tensor, o.device);

  if (!d_tensor) {
    const nb::str dtype(*d_type == DType::kFP32 ? "float32" : "bfloat16");
    const nb::tuple shape = batched ? nb::make_tuple(o.a.batch, o.a.rows, o.b.rows) : nb::make_tuple(o.a.rows, o.b.rows);
    out = alloc(shape, dtype);
    const Tensor d = nb::cast<Tensor>(out);
    o.d = matrix_view(where, "out", d, Allowed::kBF16OrFP32);
    check_output_shape("the allocated out", o.d);
    check_cuda(where, "the allocated out", d, o.device);
  }
  o.empty = o.a.rows == 0 || o.b.rows == 0 || o.a.batch == 0;
  return o;
}

nb::object gemm_nt(const Tensor& a, const Tensor& b, nb::object out, const std::optional<Tensor>& c,
                   const std::optional<std::string>& out_dtype, const GemmConfig& config, uintptr_t stream,
                   const nb::object& alloc) {
  const Operands o = check_operands("gemm_nt", a, b, out, c, out_dtype, alloc);
  if (o.empty) return out;
  {
    nb::gil_scoped_release unlocked;  // the first call of a shape compiles for seconds
    DeviceGuard device(o.device);
    gemm(o.a, o.b, o.d, reinterpret_cast<cudaStream_t>(stream), o.has_c ? &o.c : nullptr, config);
  }
  return out;
}

nb::object prepare_nt(const Tensor& a, const Tensor& b, nb::object out, const std::optional<Tensor>& c,
                      const std::optional<std::string>& out_dtype, const GemmConfig& config, const nb::object& alloc) {
  const Operands o = check_operands("prepare", a, b, out, c, out_dtype, alloc);
  if (o.empty) return out;
  {
    nb::gil_scoped_release unlocked;
    DeviceGuard device(o.device);
    prepare(o.a, o.b, o.d, o.has_c ? &o.c : nullptr, config);
  }
  return out;
}

}  // namespace

void bind_gemm(nb::module_& m) {
  using namespace nb::literals;
  m.def("gemm_nt", &gemm_nt, "a"_a, "b"_a, "out"_a.none(), "c"_a.none(), "out_dtype"_a.none(), "config"_a,
        "stream"_a, "alloc"_a,
        "D = A @ B^T (+ C) on `stream`; checks every operand, allocates `out` through alloc(shape, dtype) "
        "when it is None, and returns it. Use tilecast.gemm_nt.");
  m.def("prepare", &prepare_nt, "a"_a, "b"_a, "out"_a.none(), "c"_a.none(), "out_dtype"_a.none(), "config"_a,
        "alloc"_a, "Plans, compiles and loads what gemm_nt with these operands needs. Use tilecast.prepare.");
  m.def(
      "stream_synchronize",
      [](uintptr_t stream) {
        cudaError_t e;
        {
          nb::gil_scoped_release unlocked;
          e = cudaStreamSynchronize(reinterpret_cast<cudaStream_t>(stream));
        }
        if (e != cudaSuccess) throw Error(std::string("cudaStreamSynchronize failed: ") + cudaGetErrorString(e));
      },
      "stream"_a, "Waits for `stream` (for callers whose framework cannot be told about it, like JAX).");
  // Grouped GEMMs (m-grouped contiguous, m-grouped masked, k-grouped) bind here, beside gemm_nt,
  // once tilecast/gemm.hpp declares them; check_operands is the place their shared checks grow.
}

}  // namespace tilecast::python
