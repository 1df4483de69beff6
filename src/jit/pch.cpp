#include "jit/pch.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <random>
#include <string>

#include "jit/env.hpp"

namespace tilecast::jit {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kPrefix = "tilecast-pch-";

// The pid in "tilecast-pch-<pid>-<random>", or 0.
pid_t owner_of(const std::string& name) {
  if (name.rfind(kPrefix, 0) != 0) return 0;
  char* end = nullptr;
  const long pid = std::strtol(name.c_str() + kPrefix.size(), &end, 10);
  return end && *end == '-' && pid > 0 ? static_cast<pid_t>(pid) : 0;
}

bool running(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

// What the exit handler removes, and the process that made it (a forked child that exits must not
// take its parent's folder).
struct Owned {
  fs::path folder;
  pid_t owner = 0;
};
Owned& owned() {
  static Owned o;
  return o;
}

}  // namespace

bool pch_enabled() { return env_string("TILECAST_JIT_PCH").value_or("1") != "0"; }

fs::path make_pch_folder(const fs::path& base) {
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(base, ec)) {
    const pid_t pid = owner_of(e.path().filename().string());
    if (pid != 0 && pid != ::getpid() && !running(pid)) fs::remove_all(e.path(), ec);
  }
  std::random_device rd;
  for (int attempt = 0; attempt < 8; ++attempt) {
    const fs::path dir = base / (std::string(kPrefix) + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    if (fs::create_directory(dir, ec) && !ec) {
      fs::permissions(dir, fs::perms::owner_all, fs::perm_options::replace, ec);
      return dir;
    }
  }
  return {};
}

const fs::path& pch_folder() {
  static const fs::path folder = [] {
    std::error_code ec;
    const fs::path base = fs::temp_directory_path(ec);
    fs::path dir = ec ? fs::path() : make_pch_folder(base);
    if (!dir.empty()) {
      // NVRTC deletes the PCH files it made at exit; the folder goes too.
      owned() = {dir, ::getpid()};
      std::atexit([] {
        std::error_code ignored;
        if (owned().owner == ::getpid()) fs::remove_all(owned().folder, ignored);
      });
    }
    return dir;
  }();
  return folder;
}

}  // namespace tilecast::jit
