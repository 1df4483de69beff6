#include "jit/env.hpp"

#include <cstdlib>

namespace tilecast::jit {

std::optional<std::string> env_string(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return std::nullopt;
  return std::string(v);
}

int jit_debug_level() {
  const auto v = env_string("TILECAST_JIT_DEBUG");
  if (!v) return 0;
  char* end = nullptr;
  const long level = std::strtol(v->c_str(), &end, 10);
  return (end != v->c_str() && level > 0) ? static_cast<int>(level) : 0;
}

}  // namespace tilecast::jit
