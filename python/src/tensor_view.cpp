#include "tensor_view.hpp"

namespace tilecast::python {
namespace nb = nanobind;
namespace {

// DLPack's codes (dlpack.h): dtype kinds and device types.
enum : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kBfloat = 4, kComplex = 5, kBool = 6 };
enum : int { kCPU = 1, kCUDA = 2, kCUDAHost = 3, kROCM = 10, kCUDAManaged = 13 };

std::string prefix(const char* where, const char* name) {
  return std::string("tilecast.") + where + ": " + name;
}

std::string device_text(int type) {
  switch (type) {
    case kCPU: return "cpu";
    case kCUDAHost: return "pinned host";
    case kROCM: return "rocm";
  }
  return "DLPack device type " + std::to_string(type) + "'s";
}

}  // namespace

std::string dtype_text(const Tensor& t) {
  const nb::dlpack::dtype d = t.dtype();
  std::string kind;
  switch (d.code) {
    case kInt: kind = "int"; break;
    case kUInt: kind = "uint"; break;
    case kFloat: kind = "float"; break;
    case kBfloat: kind = "bfloat"; break;
    case kComplex: kind = "complex"; break;
    case kBool: return "bool";
    default: kind = "dlpack-code-" + std::to_string(d.code) + "-"; break;
  }
  std::string s = kind + std::to_string(d.bits);
  if (d.lanes != 1) s += "x" + std::to_string(d.lanes);
  return s;
}

std::string shape_text(const Tensor& t) {
  std::string s = "(";
  for (size_t i = 0; i < t.ndim(); ++i) s += (i ? ", " : "") + std::to_string(t.shape(i));
  return s + (t.ndim() == 1 ? ",)" : ")");
}

Tensor tensor_arg(const char* where, const char* name, nb::handle h) {
  Tensor t;
  if (!nb::try_cast(h, t))
    throw nb::type_error((prefix(where, name) + " must be an array (a torch, CuPy, JAX or NumPy array, or any "
                          "DLPack tensor), got " + Py_TYPE(h.ptr())->tp_name)
                             .c_str());
  return t;
}

void check_rank(const char* where, const char* name, const Tensor& t, size_t rank) {
  if (t.ndim() != 2 && t.ndim() != 3)
    throw nb::value_error((prefix(where, name) + " must be 2-D or 3-D (a batch), got " + std::to_string(t.ndim()) +
                           "-D with shape " + shape_text(t))
                              .c_str());
  if (rank && t.ndim() != rank)
    throw nb::value_error((prefix(where, name) + " is " + std::to_string(t.ndim()) + "-D but a is " +
                           std::to_string(rank) + "-D: every operand has the same rank")
                              .c_str());
}

MatrixView matrix_view(const char* where, const char* name, const Tensor& t, Allowed allowed) {
  const nb::dlpack::dtype d = t.dtype();
  const bool bf16 = d.code == kBfloat && d.bits == 16 && d.lanes == 1;
  const bool fp32 = d.code == kFloat && d.bits == 32 && d.lanes == 1;
  if (!bf16 && !(allowed == Allowed::kBF16OrFP32 && fp32))
    throw nb::type_error((prefix(where, name) + " must be " +
                          (allowed == Allowed::kBF16 ? "bfloat16" : "bfloat16 or float32") + ", got " + dtype_text(t))
                             .c_str());
  const size_t r = t.ndim();
  MatrixView v;
  v.data = const_cast<void*>(t.data());
  v.dtype = bf16 ? DType::kBF16 : DType::kFP32;
  v.batch = r == 3 ? static_cast<int64_t>(t.shape(0)) : 1;
  v.rows = static_cast<int64_t>(t.shape(r - 2));
  v.cols = static_cast<int64_t>(t.shape(r - 1));
  const auto strides = [&] {
    std::string s = "(";
    for (size_t i = 0; i < r; ++i) s += (i ? ", " : "") + std::to_string(t.stride(i));
    return s + ")";
  };
  // An empty view addresses nothing, and frameworks report anything as its strides (NumPy: 0s):
  // none is checked, and MatrixView's 0s mean "packed".
  if (v.rows == 0 || v.cols == 0 || v.batch == 0) return v;
  if (v.cols > 1 && t.stride(r - 1) != 1)
    throw nb::value_error((prefix(where, name) + " must be contiguous in its last dimension (stride 1), got strides " +
                           strides() + " for shape " + shape_text(t) + "; call .contiguous() first")
                              .c_str());
  // A size-1 dimension's stride is never used, and frameworks report anything there; MatrixView's
  // 0 means "packed". A used stride of 0 or less (a broadcast or flipped tensor) has no MatrixView.
  if (v.rows > 1) {
    if (t.stride(r - 2) <= 0)
      throw nb::value_error((prefix(where, name) + " has row stride " + std::to_string(t.stride(r - 2)) +
                             " (broadcast or flipped rows are not supported); strides " + strides())
                                .c_str());
    v.row_stride = t.stride(r - 2);
  } else if (v.rows == 1) {
    // A single row's stride addresses nothing, but "packed" would make it the row itself, which
    // TMA refuses unless that is a multiple of 16 bytes (a [1, 50257] bf16 view of padded rows):
    // it gets the least 16-byte multiple, the row rounded up, whatever the framework reports. The
    // C++ checks bound a view by (rows - 1) row strides, none here, and any batch stride that
    // passes its own 16-byte rule is at least this long.
    const int64_t per_16_bytes = bf16 ? 8 : 4;
    v.row_stride = (v.cols + per_16_bytes - 1) / per_16_bytes * per_16_bytes;
  }
  if (v.batch > 1) {
    if (t.stride(0) <= 0)
      throw nb::value_error((prefix(where, name) + " has batch stride " + std::to_string(t.stride(0)) +
                             " (broadcast or flipped batches are not supported); strides " + strides())
                                .c_str());
    v.batch_stride = t.stride(0);
  }
  return v;
}

void check_ndim(const char* where, const char* name, const Tensor& t, size_t rank, const char* dims) {
  if (t.ndim() != rank)
    throw nb::value_error((prefix(where, name) + " must be " + std::to_string(rank) + "-D " + dims + ", got " +
                           std::to_string(t.ndim()) + "-D with shape " + shape_text(t))
                              .c_str());
}

namespace {

// Rank 1 and unit stride (a length-1 vector's stride is never used).
void check_vector(const char* where, const char* name, const Tensor& t, const char* what) {
  if (t.ndim() != 1)
    throw nb::value_error((prefix(where, name) + " must be 1-D (" + what + "), got " + std::to_string(t.ndim()) +
                           "-D with shape " + shape_text(t))
                              .c_str());
  if (t.shape(0) > 1 && t.stride(0) != 1)
    throw nb::value_error((prefix(where, name) + " must be contiguous (stride 1), got stride " +
                           std::to_string(t.stride(0)) + "; call .contiguous() first")
                              .c_str());
}

}  // namespace

const int32_t* int32_vector(const char* where, const char* name, const Tensor& t) {
  const nb::dlpack::dtype d = t.dtype();
  if (!(d.code == kInt && d.bits == 32 && d.lanes == 1))
    throw nb::type_error((prefix(where, name) + " must be int32, got " + dtype_text(t)).c_str());
  check_vector(where, name, t, "int32 entries");
  return static_cast<const int32_t*>(t.data());
}

VectorView bias_vector(const char* where, const char* name, const Tensor& t) {
  const nb::dlpack::dtype d = t.dtype();
  const bool bf16 = d.code == kBfloat && d.bits == 16 && d.lanes == 1;
  const bool fp32 = d.code == kFloat && d.bits == 32 && d.lanes == 1;
  if (!bf16 && !fp32)
    throw nb::type_error((prefix(where, name) + " must be bfloat16 or float32, got " + dtype_text(t)).c_str());
  check_vector(where, name, t, "one value per column of the output");
  VectorView v;
  v.data = const_cast<void*>(t.data());
  v.dtype = bf16 ? DType::kBF16 : DType::kFP32;
  v.length = static_cast<int64_t>(t.shape(0));
  return v;
}

int check_cuda(const char* where, const char* name, const Tensor& t, int device) {
  const int type = t.device_type();
  if (type != kCUDA && type != kCUDAManaged)
    throw nb::value_error((prefix(where, name) + " is not on a CUDA device (it is in " + device_text(type) +
                           " memory); tilecast runs on CUDA tensors only")
                              .c_str());
  if (device >= 0 && t.device_id() != device)
    throw nb::value_error((prefix(where, name) + " is on cuda:" + std::to_string(t.device_id()) + " but a is on cuda:" +
                           std::to_string(device) + ": every operand must be on one device")
                              .c_str());
  return t.device_id();
}

}  // namespace tilecast::python
