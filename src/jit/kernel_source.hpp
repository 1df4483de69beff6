// Generated kernel sources from named template arguments, never positional slots: the source lists
// every argument under its name (so a cached .cu explains itself) and the name expression
// instantiates the template through NVRTC.
//
//   KernelSpec spec = KernelSource("tilecast::gemm_kernel")
//                         .include("tilecast/device/kernels/gemm.cuh")
//                         .arg("kBlockM", 128).arg("kBlockN", 256)
//                         .arg_expr("kSwizzle", "tilecast::Swizzle::k128B")
//                         .spec();
//   // spec.name_expression == "tilecast::gemm_kernel<128, 256, tilecast::Swizzle::k128B>"
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "jit/compiler.hpp"

namespace tilecast::jit {

struct TemplateArg {
  std::string name;   // the template parameter's name, for readers
  std::string value;  // C++ text of the argument
  friend bool operator==(const TemplateArg&, const TemplateArg&) = default;
};

class KernelSource {
 public:
  explicit KernelSource(std::string kernel_template);

  KernelSource& include(std::string header);  // a device header, by its name under include/
  KernelSource& arg(std::string name, int64_t value);
  KernelSource& arg_bool(std::string name, bool value);
  KernelSource& arg_expr(std::string name, std::string cpp_expression);

  // "<template><a, b, c>".
  std::string name_expression() const;
  // The includes, then the labelled arguments in a comment block.
  std::string source() const;
  KernelSpec spec(std::vector<std::string> options = {}) const;

  const std::vector<TemplateArg>& args() const { return args_; }

 private:
  std::string template_;
  std::vector<std::string> includes_;
  std::vector<TemplateArg> args_;
};

// The labelled arguments of a source() text, in order (the round trip of KernelSource).
std::vector<TemplateArg> parse_template_args(std::string_view source);

}  // namespace tilecast::jit
