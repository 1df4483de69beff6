#include "jit/resource_report.hpp"

#include <charconv>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace tilecast::jit {
namespace {

constexpr std::string_view kUnknownReport = "unknown";

// The integer right before `suffix` in `line` ("16384 bytes stack frame" -> 16384), or nullopt.
std::optional<int> number_before(std::string_view line, std::string_view suffix) {
  const size_t at = line.find(suffix);
  if (at == std::string_view::npos) return std::nullopt;
  size_t end = at;
  while (end > 0 && line[end - 1] == ' ') --end;
  size_t begin = end;
  while (begin > 0 && line[begin - 1] >= '0' && line[begin - 1] <= '9') --begin;
  if (begin == end) return std::nullopt;
  int value = 0;
  std::from_chars(line.data() + begin, line.data() + end, value);
  return value;
}

// The integer right after `prefix` ("Used 32 registers" with prefix "Used " -> 32).
std::optional<int> number_after(std::string_view line, std::string_view prefix) {
  const size_t at = line.find(prefix);
  if (at == std::string_view::npos) return std::nullopt;
  size_t begin = at + prefix.size();
  size_t end = begin;
  while (end < line.size() && line[end] >= '0' && line[end] <= '9') ++end;
  if (begin == end) return std::nullopt;
  int value = 0;
  std::from_chars(line.data() + begin, line.data() + end, value);
  return value;
}

// The text between the first pair of single quotes after `marker`, or the rest of the line.
std::string_view name_after(std::string_view line, std::string_view marker) {
  size_t at = line.find(marker);
  if (at == std::string_view::npos) return {};
  std::string_view rest = line.substr(at + marker.size());
  if (!rest.empty() && rest.front() == '\'') {
    rest.remove_prefix(1);
    return rest.substr(0, rest.find('\''));
  }
  while (!rest.empty() && (rest.back() == ' ' || rest.back() == '\r')) rest.remove_suffix(1);
  return rest;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(text.substr(begin, end - begin));
    begin = end + 1;
  }
  return lines;
}

constexpr std::string_view kEntryMarker = "Compiling entry function ";
constexpr std::string_view kPropertiesMarker = "Function properties for ";

}  // namespace

std::string ResourceReport::to_string() const {
  if (!found) return std::string(kUnknownReport);
  std::ostringstream s;
  s << "regs=" << registers << " spill_st=" << spill_store_bytes << " spill_ld=" << spill_load_bytes
    << " stack=" << stack_frame_bytes << " cum_stack=" << cumulative_stack_bytes
    << " smem=" << shared_bytes << " barriers=" << barriers;
  return s.str();
}

std::optional<ResourceReport> ResourceReport::from_string(std::string_view line) {
  ResourceReport r;
  if (line == kUnknownReport) return r;
  r.found = true;
  const struct {
    std::string_view key;
    int ResourceReport::*field;
  } fields[] = {{"regs=", &ResourceReport::registers},
                {"spill_st=", &ResourceReport::spill_store_bytes},
                {"spill_ld=", &ResourceReport::spill_load_bytes},
                {"stack=", &ResourceReport::stack_frame_bytes},
                {"cum_stack=", &ResourceReport::cumulative_stack_bytes},
                {"smem=", &ResourceReport::shared_bytes},
                {"barriers=", &ResourceReport::barriers}};
  for (const auto& f : fields) {
    // Match the key at a word start, so "stack=" does not match inside "cum_stack=".
    size_t at = 0;
    std::optional<int> value;
    while ((at = line.find(f.key, at)) != std::string_view::npos) {
      if (at == 0 || line[at - 1] == ' ') {
        value = number_after(line.substr(at), f.key);
        break;
      }
      at += f.key.size();
    }
    if (!value) return std::nullopt;
    r.*f.field = *value;
  }
  return r;
}

ResourceReport parse_ptxas_report(std::string_view log, std::string_view lowered_name) {
  const std::vector<std::string_view> lines = split_lines(log);

  // Every entry function ptxas compiled: a "Function properties" block for any other name is a
  // non-inlined device function of this program.
  std::set<std::string_view> entries;
  for (std::string_view line : lines) {
    if (line.find(kEntryMarker) != std::string_view::npos) entries.insert(name_after(line, kEntryMarker));
  }

  ResourceReport r;
  std::string_view current_entry;   // the entry whose "Compiling entry function" section we are in
  std::string_view properties_of;   // the function of the last "Function properties for" line
  for (std::string_view line : lines) {
    if (line.find(kEntryMarker) != std::string_view::npos) {
      current_entry = name_after(line, kEntryMarker);
      properties_of = {};
      continue;
    }
    if (line.find(kPropertiesMarker) != std::string_view::npos) {
      properties_of = name_after(line, kPropertiesMarker);
      continue;
    }
    if (line.find("bytes stack frame") != std::string_view::npos && !properties_of.empty()) {
      const bool own = properties_of == lowered_name;
      if (own || !entries.contains(properties_of)) {
        r.spill_store_bytes += number_before(line, "bytes spill stores").value_or(0);
        r.spill_load_bytes += number_before(line, "bytes spill loads").value_or(0);
      }
      if (own) {
        r.found = true;
        r.stack_frame_bytes = number_before(line, "bytes stack frame").value_or(0);
      }
      properties_of = {};
      continue;
    }
    if (current_entry == lowered_name && line.find("Used ") != std::string_view::npos &&
        line.find(" registers") != std::string_view::npos) {
      r.found = true;
      r.registers = number_after(line, "Used ").value_or(0);
      r.barriers = number_after(line, "used ").value_or(0);
      r.cumulative_stack_bytes = number_before(line, "bytes cumulative stack size").value_or(0);
      r.shared_bytes = number_before(line, "bytes smem").value_or(0);
    }
  }
  return r;
}

}  // namespace tilecast::jit
