// DLPack tensors (torch, CuPy, JAX, NumPy: anything nanobind's ndarray imports) -> MatrixView,
// with the checks that need no GPU: rank, dtype, strides, then the device. Each failure raises the
// Python exception a torch user expects (TypeError for a dtype, ValueError for a rank, a shape, a
// stride or a device), naming the function, the argument and what it got, before anything touches
// CUDA; the rules MatrixView itself cannot express stop here, the rest (16-byte alignment, overlap)
// are tilecast::gemm's own checks, raised as tilecast.Error.
#pragma once

#include <nanobind/ndarray.h>

#include <string>

#include "tilecast/types.hpp"

namespace tilecast::python {

// Read-only import: it accepts read-only sources too, and asks frameworks for the cheaper unversioned
// capsule first; `out` is written through the same view.
using Tensor = nanobind::ndarray<nanobind::ro>;

// "float32", "bfloat16", "int64", ...
std::string dtype_text(const Tensor& t);
// "(4, 8)"
std::string shape_text(const Tensor& t);

// An array argument given as a Python object (`out`, `d`, or what an allocator returned): TypeError
// naming it when it is no array nanobind can import (nb::cast would raise std::bad_cast's
// RuntimeError, naming nothing).
Tensor tensor_arg(const char* where, const char* name, nanobind::handle h);

// Which dtypes an argument may have.
enum class Allowed { kBF16, kBF16OrFP32 };

// The view of `t` (2-D [rows, cols] or 3-D [batch, rows, cols], last dimension contiguous, rows and
// batches with positive strides in elements). `where` names the call ("gemm_nt"), `name` the
// argument; rank and device are checked by the caller (all operands share them).
MatrixView matrix_view(const char* where, const char* name, const Tensor& t, Allowed allowed);

// Throws ValueError unless t has rank 2 or 3 (and `rank`, when given, that one).
void check_rank(const char* where, const char* name, const Tensor& t, size_t rank = 0);

// Throws ValueError unless t has exactly `rank` dimensions; `dims` says what they hold
// ("[num_groups, n, k]").
void check_ndim(const char* where, const char* name, const Tensor& t, size_t rank, const char* dims);

// A 1-D int32 array with unit stride (the group arrays: expert offsets or row indices, masked row
// counts, k-group sizes): its data pointer, which the host never reads. TypeError for another
// dtype, ValueError for another rank or a stride; its length and device are the caller's checks.
const int32_t* int32_vector(const char* where, const char* name, const Tensor& t);

// The bias of the epilogue: a 1-D bfloat16 or float32 vector with unit stride. TypeError for
// another dtype, ValueError for another rank or a stride; length and device are the caller's.
VectorView bias_vector(const char* where, const char* name, const Tensor& t);

// Throws ValueError unless t lives in CUDA device (or managed) memory, on `device` when >= 0.
// Returns its device ordinal.
int check_cuda(const char* where, const char* name, const Tensor& t, int device = -1);

}  // namespace tilecast::python
