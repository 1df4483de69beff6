"""DLPack capsules made by hand (ctypes): bfloat16 tensors in host memory, which NumPy cannot
make, so that the argument checks can be tested past the dtype check on a machine without a GPU
or PyTorch. The device type may be set to anything DLPack names (1 cpu, 2 CUDA, 3 pinned host
memory): a "CUDA" capsule still points at host memory, so it serves only tests whose call stops
at a check before anything reads it (the C++ API refuses host memory before it launches). A
capsule can be consumed once: make a fresh one for each call."""

import ctypes

import numpy as np

CPU, CUDA, CUDA_HOST = 1, 2, 3
INT, FLOAT, BFLOAT = 0, 2, 4


class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _Device),
        ("ndim", ctypes.c_int32),
        ("dtype", _DType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class _Managed(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(_Managed))
_Managed._fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]

_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

_keep = []  # buffers, shapes and structs outlive the capsules (a test process is short)
_no_op_deleter = _Deleter(lambda managed: None)


def tensor(shape, dtype="bfloat16", strides=None, device_type=CPU, device_id=0):
    """A DLPack capsule of a zero-filled host buffer with this shape and (element) strides."""
    code, bits = {"bfloat16": (BFLOAT, 16), "float32": (FLOAT, 32), "int32": (INT, 32)}[dtype]
    elems = 1 + sum((s - 1) * st for s, st in zip(shape, strides)) if strides else int(np.prod(shape))
    buffer = np.zeros(max(elems, 1) * bits // 8 + 16, np.uint8)
    shape_arr = (ctypes.c_int64 * len(shape))(*shape)
    strides_arr = (ctypes.c_int64 * len(shape))(*strides) if strides else None
    managed = _Managed()
    managed.dl_tensor = _Tensor(
        buffer.ctypes.data, _Device(device_type, device_id), len(shape), _DType(code, bits, 1), shape_arr,
        strides_arr, 0,
    )
    managed.deleter = _no_op_deleter
    _keep.extend([buffer, shape_arr, strides_arr, managed])
    return _PyCapsule_New(ctypes.addressof(managed), b"dltensor", None)
