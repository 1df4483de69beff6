#include "jit/compiler.hpp"

#include <nvrtc.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>

#include "jit/embedded_headers.hpp"
#include "jit/env.hpp"
#include "tilecast/types.hpp"

#ifndef TILECAST_BUILD_CCCL_INCLUDE
#define TILECAST_BUILD_CCCL_INCLUDE ""
#endif

namespace tilecast::jit {
namespace fs = std::filesystem;
namespace {

// Bumped when the meaning of a key or the layout of what it names changes.
constexpr const char* kKeyFormat = "tilecast-jit-key-v1";
constexpr int kSourceLinesInErrors = 30;

bool is_cccl_dir(const fs::path& dir) {
  std::error_code ec;
  return fs::exists(dir / "cuda" / "ptx", ec) && fs::exists(dir / "cuda" / "std" / "version", ec);
}

fs::path without_trailing_separator(fs::path p) {
  p = p.lexically_normal();
  if (!p.has_filename() && p.has_parent_path()) p = p.parent_path();
  return p;
}

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return {};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The value of "#define <macro> <value>" in `file`, or "" when absent.
std::string define_value(const fs::path& file, std::string_view macro) {
  const std::string text = read_text(file);
  const std::string needle = "#define " + std::string(macro) + " ";
  const size_t at = text.find(needle);
  if (at == std::string::npos) return {};
  size_t begin = text.find_first_not_of(' ', at + needle.size());
  if (begin == std::string::npos) return {};
  const size_t end = text.find_first_of(" \t\r\n", begin);
  return text.substr(begin, end == std::string::npos ? std::string::npos : end - begin);
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  if (nvrtcVersion(&major, &minor) != NVRTC_SUCCESS) throw Error("nvrtcVersion failed");
  return std::to_string(major) + "." + std::to_string(minor);
}

void check_nvrtc(nvrtcResult r, const char* call) {
  if (r != NVRTC_SUCCESS) throw Error(std::string(call) + " failed: " + nvrtcGetErrorString(r));
}

std::string first_lines(std::string_view text, int count) {
  std::ostringstream s;
  size_t begin = 0;
  for (int n = 1; n <= count && begin < text.size(); ++n) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    s << (n < 10 ? "   " : n < 100 ? "  " : " ") << n << "| " << text.substr(begin, end - begin)
      << "\n";
    begin = end + 1;
  }
  if (begin < text.size()) s << "    ...\n";
  return s.str();
}

class Program {
 public:
  Program(const KernelSpec& spec, const std::vector<SourceHeader>& headers) {
    std::vector<const char*> names, contents;
    for (const auto& h : headers) {
      names.push_back(h.name.c_str());
      contents.push_back(h.content.c_str());
    }
    check_nvrtc(nvrtcCreateProgram(&program_, spec.source.c_str(), "tilecast_jit.cu",
                                   static_cast<int>(headers.size()), contents.data(), names.data()),
                "nvrtcCreateProgram");
  }
  ~Program() { nvrtcDestroyProgram(&program_); }
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  nvrtcProgram get() const { return program_; }

  std::string log() const {
    size_t size = 0;
    if (nvrtcGetProgramLogSize(program_, &size) != NVRTC_SUCCESS || size == 0) return {};
    std::string log(size, '\0');
    if (nvrtcGetProgramLog(program_, log.data()) != NVRTC_SUCCESS) return {};
    while (!log.empty() && log.back() == '\0') log.pop_back();
    return log;
  }

 private:
  nvrtcProgram program_ = nullptr;
};

std::vector<SourceHeader> embedded_copy() {
  std::vector<SourceHeader> out;
  for (const EmbeddedHeader& h : embedded_headers()) {
    if (!h.name.empty()) out.push_back({std::string(h.name), std::string(h.content)});
  }
  return out;
}

}  // namespace

fs::path find_cccl_include() {
  std::vector<std::string> tried;
  if (auto dir = env_string("TILECAST_CCCL_INCLUDE")) {
    if (is_cccl_dir(*dir)) return without_trailing_separator(*dir);
    throw Error("TILECAST_CCCL_INCLUDE=" + *dir +
                " does not hold CCCL (expected cuda/ptx and cuda/std/version under it)");
  }
  std::vector<fs::path> candidates;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"}) {
    if (auto root = env_string(var)) candidates.push_back(fs::path(*root) / "include" / "cccl");
  }
  if (std::string_view(TILECAST_BUILD_CCCL_INCLUDE).size() > 0) {
    candidates.emplace_back(TILECAST_BUILD_CCCL_INCLUDE);
  }
  candidates.emplace_back("/usr/local/cuda/include/cccl");
  for (const fs::path& dir : candidates) {
    if (is_cccl_dir(dir)) return without_trailing_separator(dir);
    tried.push_back(dir.string());
  }
  std::string list;
  for (const auto& t : tried) list += "\n  " + t;
  throw Error("CCCL headers not found (the JIT needs cuda/ptx and cuda/std from the CUDA toolkit); "
              "set TILECAST_CCCL_INCLUDE or CUDA_HOME. Tried:" + list);
}

Compiler::Compiler() : Compiler(embedded_copy(), find_cccl_include()) {}

Compiler::Compiler(std::vector<SourceHeader> headers, fs::path cccl_include, bool precompiled_headers)
    : headers_(std::move(headers)), cccl_include_(without_trailing_separator(cccl_include)) {
  if (!is_cccl_dir(cccl_include_)) {
    throw Error("CCCL headers not found in " + cccl_include_.string() +
                " (expected cuda/ptx and cuda/std/version under it)");
  }
  // The toolkit's own headers (cuda_bf16.h, ...) sit one level up from CCCL in the toolkit layout.
  std::error_code ec;
  const fs::path toolkit = cccl_include_.parent_path();
  if (fs::exists(toolkit / "cuda_bf16.h", ec)) toolkit_include_ = toolkit;

  std::string cccl_version = define_value(cccl_include_ / "cuda/std/__cccl/version.h", "CCCL_VERSION");
  if (cccl_version.empty()) {
    // An unknown layout: key on the version header's contents instead.
    cccl_version = "content:" + fnv128(read_text(cccl_include_ / "cuda/std/version")).hex();
  }
  std::string cuda_version = "none";
  if (!toolkit_include_.empty()) cuda_version = define_value(toolkit_include_ / "cuda.h", "CUDA_VERSION");
  toolchain_ = "nvrtc " + nvrtc_version() + ", cccl " + cccl_version + ", cuda " + cuda_version;

  Fnv128 h;
  for (const auto& header : headers_) h.field(header.name, header.content);
  headers_digest_ = h.digest();

  // NVRTC checks a PCH against the options but not against the contents of in-memory headers: a
  // PCH made with one version of a header would answer a compile with another, silently. So each
  // header set gets its own folder (tested: JitPch.ChangedHeaderIsNeverAnsweredFromAnOldPch).
  if (precompiled_headers && !pch_folder().empty()) {
    std::error_code ec;
    const fs::path dir = pch_folder() / headers_digest_.hex();
    if (fs::create_directories(dir, ec) || fs::is_directory(dir, ec)) pch_dir_ = dir;
  }
}

std::vector<std::string> Compiler::fixed_options() const {
  std::vector<std::string> o = {std::string("-arch=") + kArch, "-std=c++20", "-default-device",
                                "--ptxas-options=-v",  // the resource report in the program log
                                "--ptxas-options=--warn-on-spills"};
  // TILECAST_JIT_LINEINFO=1: source lines in the cubin, for compute-sanitizer and Nsight reports
  // (part of the cache key, like every option).
  if (env_string("TILECAST_JIT_LINEINFO").value_or("") == "1") o.push_back("-lineinfo");
  // TILECAST_JIT_OPTIONS: more NVRTC options, separated by spaces (a -D that switches an
  // experiment on in the device headers, say, so that one build times both sides).
  if (const auto extra = env_string("TILECAST_JIT_OPTIONS")) {
    std::istringstream words(*extra);
    for (std::string w; words >> w;) o.push_back(w);
  }
  return o;
}

std::vector<std::string> Compiler::options(const KernelSpec& spec, const std::vector<std::string>& fixed,
                                           bool pch) const {
  std::vector<std::string> out = fixed;
  out.insert(out.end(), spec.options.begin(), spec.options.end());
  out.push_back("-I" + cccl_include_.string());
  if (!toolkit_include_.empty()) out.push_back("-I" + toolkit_include_.string());
  // Not in the key: a path, and the cubin is the same with or without (jit/pch.hpp). No PCH
  // messages, so that a cached entry's log reads the same either way.
  if (pch && !pch_dir_.empty()) {
    out.insert(out.end(), {"-pch", "--pch-dir=" + pch_dir_.string(), "--pch-messages=false", "--pch-verbose=false"});
  }
  return out;
}

bool Compiler::pch_folder_ready() const {
  if (pch_dir_.empty()) return false;
  // NVRTC fails a compile whose --pch-dir is missing ("invalid PCH directory") rather than
  // compiling without: the folder is made again where it went.
  std::error_code ec;
  return fs::is_directory(pch_dir_, ec) || fs::create_directories(pch_dir_, ec);
}

Hash128 Compiler::cache_key(const KernelSpec& spec, const std::vector<std::string>& fixed) const {
  Fnv128 h;
  h.field("format", kKeyFormat);
  h.field("arch", kArch);
  h.field("toolchain", toolchain_);
  h.field("headers", headers_digest_.hex());
  for (const std::string& o : fixed) h.field("option", o);
  for (const std::string& o : spec.options) h.field("option", o);
  h.field("name", spec.name_expression);
  h.field("source", spec.source);
  return h.digest();
}

CompiledKernel Compiler::compile(const KernelSpec& spec, const std::vector<std::string>& fixed) const {
  if (spec.name_expression.empty()) throw Error("JIT: a kernel spec needs a name expression");
  bool pch = pch_folder_ready();
  std::unique_ptr<Program> program;
  nvrtcResult result = NVRTC_SUCCESS;
  for (;;) {
    program = std::make_unique<Program>(spec, headers_);
    check_nvrtc(nvrtcAddNameExpression(program->get(), spec.name_expression.c_str()), "nvrtcAddNameExpression");
    const std::vector<std::string> opts = options(spec, fixed, pch);
    std::vector<const char*> argv;
    for (const auto& o : opts) argv.push_back(o.c_str());
    result = nvrtcCompileProgram(program->get(), static_cast<int>(argv.size()), argv.data());
    // The folder went between the check and the compile: once more, without a PCH.
    if (result == NVRTC_SUCCESS || !pch || program->log().find("PCH directory") == std::string::npos) break;
    pch = false;
  }

  CompiledKernel out;
  out.log = program->log();
  if (pch && jit_debug_level() >= 1) {
    // Whether this compile saved a PCH: NVRTC_ERROR_NO_PCH_CREATE_ATTEMPTED when it used one
    // (or chose not to); a full PCH heap is worth knowing (nvrtcSetPCHHeapSize).
    const nvrtcResult made = nvrtcGetPCHCreateStatus(program->get());
    size_t need = 0;
    if (made == NVRTC_ERROR_PCH_CREATE_HEAP_EXHAUSTED) nvrtcGetPCHHeapSizeRequired(program->get(), &need);
    std::fprintf(stderr, "tilecast jit: pch %s%s for %s\n",
                 made == NVRTC_SUCCESS ? "created" : nvrtcGetErrorString(made),
                 need ? (", the PCH heap needs " + std::to_string(need >> 20) + " MiB").c_str() : "",
                 spec.name_expression.c_str());
  }
  if (result != NVRTC_SUCCESS) {
    throw Error("NVRTC could not compile " + spec.name_expression + " for " + kArch + " (" +
                nvrtcGetErrorString(result) + "):\n" + out.log +
                "\n--- generated source, first lines ---\n" +
                first_lines(spec.source, kSourceLinesInErrors));
  }

  const char* lowered = nullptr;
  check_nvrtc(nvrtcGetLoweredName(program->get(), spec.name_expression.c_str(), &lowered),
              "nvrtcGetLoweredName");
  out.lowered_name = lowered;

  size_t cubin_size = 0;
  check_nvrtc(nvrtcGetCUBINSize(program->get(), &cubin_size), "nvrtcGetCUBINSize");
  if (cubin_size == 0) throw Error("NVRTC produced an empty cubin for " + spec.name_expression);
  out.cubin.resize(cubin_size);
  check_nvrtc(nvrtcGetCUBIN(program->get(), out.cubin.data()), "nvrtcGetCUBIN");

  // Where a GPU driver is installed, NVRTC may take the cubin from the driver's compute cache
  // (~/.nv/ComputeCache) without running ptxas, and the log then has no resource report (seen
  // with NVRTC 13.0 on the H200 machine, for a program compiled before). The kernel is as good;
  // only the report is unknown (report.found stays false).
  out.report = parse_ptxas_report(out.log, out.lowered_name);
  return out;
}

}  // namespace tilecast::jit
