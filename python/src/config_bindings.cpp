// GemmConfig (keyword arguments, the config text), parse_config and format_config.
#include <nanobind/nanobind.h>
#include <nanobind/stl/string.h>

#include "bindings.hpp"
#include "tilecast/gemm.hpp"

namespace tilecast::python {
namespace nb = nanobind;

void bind_config(nb::module_& m) {
  using namespace nb::literals;
  nb::class_<GemmConfig>(m, "GemmConfig",
                         "Overrides of the planner; 0 (or -1) leaves a field to the heuristic. Same fields as "
                         "tilecast::GemmConfig; str() gives the config text parse_config reads.")
      .def(
          "__init__",
          [](GemmConfig* self, uint32_t block_m, uint32_t block_n, uint32_t block_k, uint32_t stages, uint32_t cluster_m,
             uint32_t cluster_n, int multicast_a, int multicast_b, uint32_t swizzle, uint32_t max_sms, int companion,
             uint32_t k_splits, int swap_ab, int fused_reduce, int cluster_reduce, int split_columns, int pingpong,
             int k_serpentine) {
            new (self) GemmConfig{block_m, block_n, block_k, stages, cluster_m, cluster_n, multicast_a,
                                  multicast_b, swizzle, max_sms, companion, k_splits, swap_ab, fused_reduce,
                                  cluster_reduce, split_columns, pingpong, k_serpentine};
          },
          nb::kw_only(), "block_m"_a = 0, "block_n"_a = 0, "block_k"_a = 0, "stages"_a = 0, "cluster_m"_a = 0,
          "cluster_n"_a = 0, "multicast_a"_a = -1, "multicast_b"_a = -1, "swizzle"_a = 0, "max_sms"_a = 0,
          "companion"_a = -1, "k_splits"_a = 0, "swap_ab"_a = -1, "fused_reduce"_a = -1, "cluster_reduce"_a = -1,
          "split_columns"_a = -1, "pingpong"_a = -1, "k_serpentine"_a = -1)
      .def(
          "__init__", [](GemmConfig* self, const std::string& text) { new (self) GemmConfig(parse_config(text)); },
          "text"_a, "From the config text: GemmConfig('block=128x256x64,cluster=2x1').")
      .def_rw("block_m", &GemmConfig::block_m)
      .def_rw("block_n", &GemmConfig::block_n)
      .def_rw("block_k", &GemmConfig::block_k)
      .def_rw("stages", &GemmConfig::stages)
      .def_rw("cluster_m", &GemmConfig::cluster_m)
      .def_rw("cluster_n", &GemmConfig::cluster_n)
      .def_rw("multicast_a", &GemmConfig::multicast_a)
      .def_rw("multicast_b", &GemmConfig::multicast_b)
      .def_rw("swizzle", &GemmConfig::swizzle)
      .def_rw("max_sms", &GemmConfig::max_sms)
      .def_rw("companion", &GemmConfig::companion)
      .def_rw("k_splits", &GemmConfig::k_splits)
      .def_rw("swap_ab", &GemmConfig::swap_ab)
      .def_rw("fused_reduce", &GemmConfig::fused_reduce)
      .def_rw("cluster_reduce", &GemmConfig::cluster_reduce)
      .def_rw("split_columns", &GemmConfig::split_columns)
      .def_rw("pingpong", &GemmConfig::pingpong)
      .def_rw("k_serpentine", &GemmConfig::k_serpentine)
      // An operator: against anything but a GemmConfig it returns NotImplemented (so `== None` is
      // False), not a TypeError.
      .def("__eq__", [](const GemmConfig& x, const GemmConfig& y) { return x == y; }, nb::is_operator())
      .def("__str__", &format_config)
      .def("__repr__", [](const GemmConfig& c) { return "tilecast.GemmConfig('" + format_config(c) + "')"; });
  m.def("parse_config", &parse_config, "text"_a,
        "'block=128x256x64,stages=4,cluster=2x1,multicast_a=0,...' (any subset) -> GemmConfig; raises "
        "tilecast.Error naming a bad key or value.");
  m.def("format_config", &format_config, "config"_a, "GemmConfig -> its text ('' for the defaults).");
}

}  // namespace tilecast::python
