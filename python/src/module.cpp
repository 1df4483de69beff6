// The _tilecast extension module: the C++ API for Python (tilecast/__init__.py wraps it).
#include <nanobind/nanobind.h>

#include "bindings.hpp"
#include "tilecast/types.hpp"

NB_MODULE(_tilecast, m) {
  // tilecast::Error (bad input the C++ checks caught, JIT and CUDA failures) -> tilecast.Error, a
  // RuntimeError carrying the C++ message.
  nanobind::exception<tilecast::Error>(m, "Error", PyExc_RuntimeError);
  m.attr("__version__") = TILECAST_VERSION;
  tilecast::python::bind_config(m);
  tilecast::python::bind_gemm(m);
  tilecast::python::bind_grouped(m);
  tilecast::python::bind_jit(m);
}
