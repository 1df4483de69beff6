#include "gemm_config.hpp"

#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace tilecast::bench {
namespace {

long long parse_int(const std::string& key, const std::string& v) {
  size_t used = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || v.empty())
    throw std::invalid_argument("config: " + key + " wants an integer, got '" + v + "'");
  return x;
}

uint32_t parse_u32(const std::string& key, const std::string& v) {
  const long long x = parse_int(key, v);
  if (x < 0 || x > 0xFFFFFFFFll) throw std::invalid_argument("config: " + key + " out of range");
  return static_cast<uint32_t>(x);
}

int parse_flag(const std::string& key, const std::string& v) {
  const long long x = parse_int(key, v);
  if (x < -1 || x > 1) throw std::invalid_argument("config: " + key + " wants 0, 1 or -1 (auto)");
  return static_cast<int>(x);
}

}  // namespace

void apply_cluster(GemmConfig& cfg, const std::string& text) {
  unsigned m = 0, n = 0;
  char tail = 0;
  if (std::sscanf(text.c_str(), "%ux%u%c", &m, &n, &tail) != 2 || m == 0 || n == 0)
    throw std::invalid_argument("cluster wants MxN (e.g. 2x1), got '" + text + "'");
  cfg.cluster_m = m;
  cfg.cluster_n = n;
}

void apply_config(GemmConfig& cfg, const std::string& text) {
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("config: '" + item + "' is not key=value");
    const std::string key = item.substr(0, eq), v = item.substr(eq + 1);
    if (key == "block") {
      unsigned bm = 0, bn = 0, bk = 0;
      char tail = 0;
      if (std::sscanf(v.c_str(), "%ux%ux%u%c", &bm, &bn, &bk, &tail) != 3)
        throw std::invalid_argument("config: block wants BMxBNxBK, got '" + v + "'");
      cfg.block_m = bm;
      cfg.block_n = bn;
      cfg.block_k = bk;
    } else if (key == "block_m") cfg.block_m = parse_u32(key, v);
    else if (key == "block_n") cfg.block_n = parse_u32(key, v);
    else if (key == "block_k") cfg.block_k = parse_u32(key, v);
    else if (key == "stages") cfg.stages = parse_u32(key, v);
    else if (key == "cluster") apply_cluster(cfg, v);
    else if (key == "cluster_m") cfg.cluster_m = parse_u32(key, v);
    else if (key == "cluster_n") cfg.cluster_n = parse_u32(key, v);
    else if (key == "multicast_a") cfg.multicast_a = parse_flag(key, v);
    else if (key == "multicast_b") cfg.multicast_b = parse_flag(key, v);
    else if (key == "swizzle") cfg.swizzle = parse_u32(key, v);
    else if (key == "max_sms") cfg.max_sms = parse_u32(key, v);
    else if (key == "companion") cfg.companion = parse_flag(key, v);
    else
      throw std::invalid_argument("config: unknown key '" + key + "' (block, block_m, block_n, block_k, "
                                  "stages, cluster, cluster_m, cluster_n, multicast_a, multicast_b, "
                                  "swizzle, max_sms, companion)");
  }
}

std::string describe(const GemmConfig& c) {
  std::ostringstream s;
  if (c.block_m || c.block_n || c.block_k)
    s << " block " << c.block_m << "x" << c.block_n << "x" << c.block_k;
  if (c.stages) s << " stages " << c.stages;
  if (c.cluster_m || c.cluster_n) s << " cluster " << c.cluster_m << "x" << c.cluster_n;
  if (c.multicast_a >= 0) s << " mcA " << c.multicast_a;
  if (c.multicast_b >= 0) s << " mcB " << c.multicast_b;
  if (c.swizzle) s << " swz " << c.swizzle;
  if (c.max_sms) s << " sms " << c.max_sms;
  if (c.companion >= 0) s << (c.companion ? " +companion" : " solo");
  const std::string out = s.str();
  return out.empty() ? "auto" : out.substr(1);
}

std::vector<GemmConfig> cluster_compare_configs(const GemmConfig& base) {
  std::vector<GemmConfig> out;
  const unsigned shapes[][2] = {{1, 1}, {2, 1}, {1, 2}, {2, 2}, {4, 1}, {1, 4}};
  for (const auto& s : shapes) {
    GemmConfig c = base;
    c.cluster_m = s[0];
    c.cluster_n = s[1];
    c.companion = 0;
    out.push_back(c);
  }
  for (const auto& s : shapes) {
    if (s[0] * s[1] != 4) continue;
    GemmConfig c = base;
    c.cluster_m = s[0];
    c.cluster_n = s[1];
    c.companion = 1;
    out.push_back(c);
  }
  return out;
}

}  // namespace tilecast::bench
