// GemmConfig as text, for command lines, environment variables and the Python binding.
#include <cstdio>
#include <sstream>

#include "tilecast/gemm.hpp"

namespace tilecast {
namespace {

long long parse_int(const std::string& key, const std::string& v) {
  size_t used = 0;
  long long x = 0;
  try {
    x = std::stoll(v, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != v.size() || v.empty()) throw Error("config: " + key + " wants an integer, got '" + v + "'");
  return x;
}

uint32_t parse_u32(const std::string& key, const std::string& v) {
  const long long x = parse_int(key, v);
  if (x < 0 || x > 0xFFFFFFFFll) throw Error("config: " + key + " " + v + " is out of range");
  return static_cast<uint32_t>(x);
}

int parse_switch(const std::string& key, const std::string& v) {
  const long long x = parse_int(key, v);
  if (x < -1 || x > 1) throw Error("config: " + key + " wants 0 (off), 1 (on) or -1 (auto), got " + v);
  return static_cast<int>(x);
}

void parse_pair(const std::string& key, const std::string& v, uint32_t& x, uint32_t& y) {
  unsigned a = 0, b = 0;
  char tail = 0;
  if (std::sscanf(v.c_str(), "%ux%u%c", &a, &b, &tail) != 2) throw Error("config: " + key + " wants AxB, got '" + v + "'");
  x = a;
  y = b;
}

}  // namespace

GemmConfig parse_config(const std::string& text) {
  GemmConfig cfg;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    if (eq == std::string::npos) throw Error("config: '" + item + "' is not key=value");
    const std::string key = item.substr(0, eq), v = item.substr(eq + 1);
    if (key == "block") {
      unsigned bm = 0, bn = 0, bk = 0;
      char tail = 0;
      if (std::sscanf(v.c_str(), "%ux%ux%u%c", &bm, &bn, &bk, &tail) != 3)
        throw Error("config: block wants BMxBNxBK, got '" + v + "'");
      cfg.block_m = bm;
      cfg.block_n = bn;
      cfg.block_k = bk;
    } else if (key == "block_m") cfg.block_m = parse_u32(key, v);
    else if (key == "block_n") cfg.block_n = parse_u32(key, v);
    else if (key == "block_k") cfg.block_k = parse_u32(key, v);
    else if (key == "stages") cfg.stages = parse_u32(key, v);
    else if (key == "cluster") parse_pair(key, v, cfg.cluster_m, cfg.cluster_n);
    else if (key == "cluster_m") cfg.cluster_m = parse_u32(key, v);
    else if (key == "cluster_n") cfg.cluster_n = parse_u32(key, v);
    else if (key == "multicast_a") cfg.multicast_a = parse_switch(key, v);
    else if (key == "multicast_b") cfg.multicast_b = parse_switch(key, v);
    else if (key == "swizzle") cfg.swizzle = parse_u32(key, v);
    else if (key == "max_sms") cfg.max_sms = parse_u32(key, v);
    else if (key == "companion") cfg.companion = parse_switch(key, v);
    else if (key == "k_splits") cfg.k_splits = parse_u32(key, v);
    else if (key == "swap_ab") cfg.swap_ab = parse_switch(key, v);
    else if (key == "fused_reduce") cfg.fused_reduce = parse_switch(key, v);
    else if (key == "cluster_reduce") cfg.cluster_reduce = parse_switch(key, v);
    else if (key == "split_columns") cfg.split_columns = parse_switch(key, v);
    else if (key == "pingpong") cfg.pingpong = parse_switch(key, v);
    else if (key == "k_serpentine") cfg.k_serpentine = parse_switch(key, v);
    else
      throw Error("config: unknown key '" + key + "' (block, block_m, block_n, block_k, stages, cluster, "
                  "cluster_m, cluster_n, multicast_a, multicast_b, swizzle, max_sms, companion, k_splits, swap_ab, "
                  "fused_reduce, cluster_reduce, split_columns, pingpong, k_serpentine)");
  }
  return cfg;
}

std::string format_config(const GemmConfig& c) {
  std::ostringstream s;
  const GemmConfig d;
  if (c.block_m != d.block_m) s << ",block_m=" << c.block_m;
  if (c.block_n != d.block_n) s << ",block_n=" << c.block_n;
  if (c.block_k != d.block_k) s << ",block_k=" << c.block_k;
  if (c.stages != d.stages) s << ",stages=" << c.stages;
  if (c.cluster_m != d.cluster_m || c.cluster_n != d.cluster_n) s << ",cluster=" << c.cluster_m << "x" << c.cluster_n;
  if (c.multicast_a != d.multicast_a) s << ",multicast_a=" << c.multicast_a;
  if (c.multicast_b != d.multicast_b) s << ",multicast_b=" << c.multicast_b;
  if (c.swizzle != d.swizzle) s << ",swizzle=" << c.swizzle;
  if (c.max_sms != d.max_sms) s << ",max_sms=" << c.max_sms;
  if (c.companion != d.companion) s << ",companion=" << c.companion;
  if (c.k_splits != d.k_splits) s << ",k_splits=" << c.k_splits;
  if (c.swap_ab != d.swap_ab) s << ",swap_ab=" << c.swap_ab;
  if (c.fused_reduce != d.fused_reduce) s << ",fused_reduce=" << c.fused_reduce;
  if (c.cluster_reduce != d.cluster_reduce) s << ",cluster_reduce=" << c.cluster_reduce;
  if (c.split_columns != d.split_columns) s << ",split_columns=" << c.split_columns;
  if (c.pingpong != d.pingpong) s << ",pingpong=" << c.pingpong;
  if (c.k_serpentine != d.k_serpentine) s << ",k_serpentine=" << c.k_serpentine;
  const std::string out = s.str();
  return out.empty() ? out : out.substr(1);
}

}  // namespace tilecast
