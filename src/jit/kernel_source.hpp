// Generated kernel sources that instantiate a kernel template with a traits struct of named
// fields, never positional arguments: the kernel reads each field by name, so a missing field
// fails to compile and the order of fields means nothing; a cached .cu explains itself.
//
//   KernelSpec spec = KernelSource("tilecast::gemm_sm90_kernel", "GemmTraits")
//                         .include("tilecast/device/kernels/gemm_sm90/kernel.cuh")
//                         .field("tilecast::uint32_t", "kBlockM", "128")
//                         .field("bool", "kHasC", "false")
//                         .spec();
//   // spec.name_expression == "tilecast::gemm_sm90_kernel<GemmTraits>", and the source holds
//   //   struct GemmTraits {
//   //     static constexpr tilecast::uint32_t kBlockM = 128;
//   //     static constexpr bool kHasC = false;
//   //   };
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jit/compiler.hpp"

namespace tilecast::jit {

struct TraitsField {
  std::string type;   // C++ type of the static constexpr member
  std::string name;   // its name, as the kernel reads it
  std::string value;  // C++ text of its value
  friend bool operator==(const TraitsField&, const TraitsField&) = default;
};

class KernelSource {
 public:
  KernelSource(std::string kernel_template, std::string traits_name);

  KernelSource& include(std::string header);  // a device header, by its name under include/
  KernelSource& field(std::string type, std::string name, std::string value);
  KernelSource& field(std::string name, uint32_t value);  // a tilecast::uint32_t field
  KernelSource& field(std::string name, uint64_t value);  // a tilecast::uint64_t field
  KernelSource& field(std::string name, bool value);

  // "<template><traits>".
  std::string name_expression() const;
  // The includes, then the traits struct.
  std::string source() const;
  KernelSpec spec(std::vector<std::string> options = {}) const;

  const std::vector<TraitsField>& fields() const { return fields_; }

 private:
  std::string template_;
  std::string traits_;
  std::vector<std::string> includes_;
  std::vector<TraitsField> fields_;
};

// The fields of the traits struct in a source() text, in order (the round trip of KernelSource).
std::vector<TraitsField> parse_traits_fields(std::string_view source);

}  // namespace tilecast::jit
