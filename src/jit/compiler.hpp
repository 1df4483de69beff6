// NVRTC: generated kernel source -> sm_90a cubin plus its ptxas resource report. Needs no GPU.
//
// A kernel source includes tilecast device headers by their name under include/ (they are
// embedded in the library) and CCCL headers (<cuda/ptx>, <cuda/std/...>, <cuda/barrier>, ...)
// from the CUDA toolkit found at run time (find_cccl_include()).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "jit/hash.hpp"
#include "jit/pch.hpp"
#include "jit/resource_report.hpp"

namespace tilecast::jit {

// What to compile: the generated source and the one kernel in it to keep.
struct KernelSpec {
  std::string source;           // generated source (labelled template arguments help readers)
  std::string name_expression;  // e.g. "tilecast::gemm_kernel<128, 256, 64>" (nvrtcAddNameExpression)
  std::vector<std::string> options;  // extra NVRTC options; they enter the cache key verbatim, so
                                     // keep absolute paths out (pass headers in memory instead)
};

struct CompiledKernel {
  std::string lowered_name;  // the mangled name of name_expression in the cubin
  std::string cubin;         // ELF bytes for sm_90a
  std::string log;           // NVRTC program log (ptxas -v lines included)
  ResourceReport report;     // parsed from `log` for lowered_name
};

// An in-memory header handed to NVRTC.
struct SourceHeader {
  std::string name;  // as written in #include "..."
  std::string content;
};

// The CCCL include folder, first of: $TILECAST_CCCL_INCLUDE (an error if set and wrong),
// $CUDA_HOME/include/cccl, $CUDA_PATH/include/cccl, the folder found when tilecast was built,
// /usr/local/cuda/include/cccl. A folder counts when it holds cuda/ptx and cuda/std/version.
// Throws tilecast::Error listing every place tried when none does.
std::filesystem::path find_cccl_include();

class Compiler {
 public:
  static constexpr const char* kArch = "sm_90a";

  // The embedded tilecast device headers and find_cccl_include().
  Compiler();
  // Explicit headers and CCCL folder (tests use this to change a header). With
  // precompiled_headers, compiles use NVRTC's automatic PCH in a folder of pch_folder() named by
  // the headers' digest (jit/pch.hpp says why).
  Compiler(std::vector<SourceHeader> headers, std::filesystem::path cccl_include,
           bool precompiled_headers = pch_enabled());

  // The options every kernel is compiled with: the arch, the language, the resource report, and
  // those the environment adds now (TILECAST_JIT_LINEINFO, TILECAST_JIT_OPTIONS: read at each
  // call). A build reads them once and gives the same list to cache_key and compile, so that the
  // environment changing in between cannot file a cubin under the other setting's key.
  std::vector<std::string> fixed_options() const;

  // Compiles spec for sm_90a. Throws tilecast::Error holding the NVRTC log and the first lines of
  // the source when NVRTC fails. With precompiled headers, a PCH folder that has gone (a /tmp
  // cleaner, another process's sweep) is made again, or the kernel compiled without one.
  CompiledKernel compile(const KernelSpec& spec, const std::vector<std::string>& fixed) const;
  CompiledKernel compile(const KernelSpec& spec) const { return compile(spec, fixed_options()); }

  // The disk cache key: a hash of a format tag, the target arch, the source, the name expression,
  // every NVRTC option except the include folders and the PCH ones (a PCH changes how fast the
  // cubin comes, not its bytes), the embedded headers' names and contents, the CCCL and CUDA
  // header versions and the NVRTC version. Never a path.
  Hash128 cache_key(const KernelSpec& spec, const std::vector<std::string>& fixed) const;
  Hash128 cache_key(const KernelSpec& spec) const { return cache_key(spec, fixed_options()); }

  // The full NVRTC option list for spec, include folders and PCH options (when `pch`) last.
  std::vector<std::string> options(const KernelSpec& spec, const std::vector<std::string>& fixed, bool pch) const;
  std::vector<std::string> options(const KernelSpec& spec) const {
    return options(spec, fixed_options(), precompiled_headers());
  }

  const std::filesystem::path& cccl_include() const { return cccl_include_; }
  const std::vector<SourceHeader>& headers() const { return headers_; }
  // "nvrtc 13.0, cccl 3000001, cuda 13000": the toolchain part of every key.
  const std::string& toolchain() const { return toolchain_; }
  bool precompiled_headers() const { return !pch_dir_.empty(); }
  // Where this compiler's PCH files go (empty without PCH).
  const std::filesystem::path& pch_dir() const { return pch_dir_; }

 private:
  // Whether this compile can use the PCH folder: there, or made again.
  bool pch_folder_ready() const;

  std::vector<SourceHeader> headers_;
  std::filesystem::path cccl_include_;
  std::filesystem::path toolkit_include_;  // cuda_bf16.h and friends when next to CCCL; else empty
  std::string toolchain_;
  Hash128 headers_digest_;
  std::filesystem::path pch_dir_;
};

}  // namespace tilecast::jit
