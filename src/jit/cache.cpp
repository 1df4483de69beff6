#include "jit/cache.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <mutex>
#include <random>
#include <set>
#include <sstream>

#include "jit/env.hpp"
#include "tilecast/types.hpp"

namespace tilecast::jit {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kMagic = "tilecast-jit-entry 1";
constexpr const char* kLayoutFolder = "v1";

std::string errno_text() { return std::strerror(errno); }

// A name no other thread, process or host writing into the same folder picks.
std::string temp_name(const std::string& final_name) {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::ostringstream s;
  s << "." << final_name << ".tmp." << ::getpid() << "." << counter.fetch_add(1) << "." << std::hex
    << rng();
  return s.str();
}

// Writes bytes to dir/name through a temporary, fsync and rename; the rename is atomic, so the
// name holds either the old or the new file, whole.
void write_atomically(const fs::path& dir, const std::string& name, std::string_view bytes) {
  const fs::path tmp = dir / temp_name(name);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw Error("JIT cache: cannot create " + tmp.string() + ": " + errno_text());
  size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const std::string why = errno_text();
      ::close(fd);
      ::unlink(tmp.c_str());
      throw Error("JIT cache: cannot write " + tmp.string() + ": " + why);
    }
    done += static_cast<size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw Error("JIT cache: cannot flush " + tmp.string() + ": " + why);
  }
  if (::rename(tmp.c_str(), (dir / name).c_str()) != 0) {
    const std::string why = errno_text();
    ::unlink(tmp.c_str());
    throw Error("JIT cache: cannot rename " + tmp.string() + " to " + name + ": " + why);
  }
  // Make the rename itself durable; a failure here loses nothing but durability.
  const int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dfd >= 0) {
    ::fsync(dfd);
    ::close(dfd);
  }
}

std::optional<std::string> read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  if (in.bad()) return std::nullopt;
  return s.str();
}

// "name value" header lines up to the first blank line.
std::optional<std::string_view> header_value(std::string_view header, std::string_view name) {
  size_t begin = 0;
  while (begin < header.size()) {
    size_t end = header.find('\n', begin);
    if (end == std::string_view::npos) end = header.size();
    std::string_view line = header.substr(begin, end - begin);
    if (line.size() > name.size() && line.substr(0, name.size()) == name &&
        line[name.size()] == ' ') {
      return line.substr(name.size() + 1);
    }
    begin = end + 1;
  }
  return std::nullopt;
}

std::optional<size_t> parse_size(std::optional<std::string_view> text) {
  if (!text || text->empty()) return std::nullopt;
  size_t v = 0;
  for (char c : *text) {
    if (c < '0' || c > '9') return std::nullopt;
    const size_t digit = static_cast<size_t>(c - '0');
    if (v > (SIZE_MAX - digit) / 10) return std::nullopt;  // more digits than a size holds
    v = v * 10 + digit;
  }
  return v;
}

// A writer's temporary (temp_name): ".<final name>.tmp.<pid>.<counter>.<random>".
bool is_temporary(const std::string& name) { return !name.empty() && name[0] == '.' && name.find(".tmp.") != std::string::npos; }

std::string payload_hash(std::string_view log, std::string_view cubin) {
  Fnv128 h;
  h.field("log", log);
  h.field("cubin", cubin);
  return h.digest().hex();
}

}  // namespace

fs::path DiskCache::default_dir() {
  if (auto dir = env_string("TILECAST_CACHE_DIR")) return *dir;
  if (auto xdg = env_string("XDG_CACHE_HOME")) return fs::path(*xdg) / "tilecast";
  if (auto home = env_string("HOME")) return fs::path(*home) / ".cache" / "tilecast";
  return {};
}

DiskCache::DiskCache(fs::path dir) : dir_(std::move(dir)) {}

fs::path DiskCache::folder() const { return dir_ / kLayoutFolder; }

fs::path DiskCache::entry_path(const Hash128& key) const {
  return folder() / (key.hex() + ".tcjit");
}

std::optional<CompiledKernel> DiskCache::load(const Hash128& key) const {
  if (!enabled()) return std::nullopt;
  const auto bytes = read_file(entry_path(key));
  if (!bytes) return std::nullopt;
  const std::string_view file = *bytes;
  const size_t split = file.find("\n\n");
  if (split == std::string_view::npos) return std::nullopt;
  const std::string_view header = file.substr(0, split + 1);
  const std::string_view payload = file.substr(split + 2);
  if (header.substr(0, kMagic.size()) != kMagic) return std::nullopt;
  if (header_value(header, "key") != key.hex()) return std::nullopt;

  const auto log_bytes = parse_size(header_value(header, "log_bytes"));
  const auto cubin_bytes = parse_size(header_value(header, "cubin_bytes"));
  const auto lowered = header_value(header, "lowered_name");
  const auto report_line = header_value(header, "report");
  const auto hash = header_value(header, "payload_fnv128");
  if (!log_bytes || !cubin_bytes || !lowered || !report_line || !hash) return std::nullopt;
  // (Not as a sum: crafted sizes could wrap around to the payload's.)
  if (*log_bytes > payload.size() || payload.size() - *log_bytes != *cubin_bytes) return std::nullopt;
  const auto report = ResourceReport::from_string(*report_line);
  if (!report) return std::nullopt;

  CompiledKernel k;
  k.log = std::string(payload.substr(0, *log_bytes));
  k.cubin = std::string(payload.substr(*log_bytes));
  if (payload_hash(k.log, k.cubin) != *hash) return std::nullopt;
  k.lowered_name = std::string(*lowered);
  k.report = *report;
  return k;
}

void DiskCache::store(const Hash128& key, const CompiledKernel& kernel, const KernelSpec& spec,
                      bool with_cubin_file) const {
  if (!enabled()) return;
  const fs::path dir = folder();
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw Error("JIT cache: cannot create " + dir.string() + ": " + ec.message());
  const std::string hex = key.hex();

  std::ostringstream entry;
  entry << kMagic << "\n"
        << "key " << hex << "\n"
        << "lowered_name " << kernel.lowered_name << "\n"
        << "report " << kernel.report.to_string() << "\n"
        << "log_bytes " << kernel.log.size() << "\n"
        << "cubin_bytes " << kernel.cubin.size() << "\n"
        << "payload_fnv128 " << payload_hash(kernel.log, kernel.cubin) << "\n"
        << "\n"
        << kernel.log << kernel.cubin;
  write_atomically(dir, hex + ".tcjit", entry.str());

  // For people: the source with what it was compiled as. Not read back.
  std::ostringstream cu;
  cu << "// tilecast JIT cache entry " << hex << "\n"
     << "// name expression: " << spec.name_expression << "\n"
     << "// lowered name:    " << kernel.lowered_name << "\n"
     << "// extra options:  ";
  for (const auto& o : spec.options) cu << " " << o;
  if (spec.options.empty()) cu << " (none)";
  cu << "\n// resources:       " << kernel.report.to_string() << "\n\n" << spec.source;
  write_atomically(dir, hex + ".cu", cu.str());

  if (with_cubin_file) write_atomically(dir, hex + ".cubin", kernel.cubin);
  sweep_temporaries();
}

void DiskCache::sweep_temporaries() const {
  // A writer killed between its write and its rename leaves its temporary behind; no one renames
  // it later. One an hour old is no live writer's (a write takes milliseconds). Once per process
  // and folder: a sweep lists the folder.
  static std::mutex mutex;
  static std::set<fs::path> swept;
  {
    std::lock_guard lock(mutex);
    if (!swept.insert(folder()).second) return;
  }
  std::error_code ec;
  const auto now = fs::file_time_type::clock::now();
  for (fs::directory_iterator it(folder(), ec), end; !ec && it != end; it.increment(ec)) {
    if (!is_temporary(it->path().filename().string())) continue;
    std::error_code time_ec;
    const auto written = fs::last_write_time(it->path(), time_ec);
    if (!time_ec && now - written > kStaleTemporary) fs::remove(it->path(), time_ec);  // another sweep may race
  }
}

}  // namespace tilecast::jit
