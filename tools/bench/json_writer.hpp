// A small streaming JSON writer (objects, arrays, strings, numbers, booleans), enough for the
// bench's output file. Non-finite numbers are written as null.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace tilecast::bench {

class JsonWriter {
 public:
  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }

  JsonWriter& key(const std::string& k) {
    comma();
    string_literal(k);
    out_ += ": ";
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(const std::string& v) { comma(); string_literal(v); return *this; }
  JsonWriter& value(const char* v) { return value(std::string(v)); }
  JsonWriter& value(bool v) { comma(); out_ += v ? "true" : "false"; return *this; }
  JsonWriter& value(double v) {
    comma();
    if (!std::isfinite(v)) {
      out_ += "null";
    } else {
      char buf[40];
      std::snprintf(buf, sizeof buf, "%.10g", v);
      out_ += buf;
    }
    return *this;
  }
  JsonWriter& value(int64_t v) { comma(); out_ += std::to_string(v); return *this; }
  JsonWriter& value(int v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& value(unsigned v) { return value(static_cast<int64_t>(v)); }
  JsonWriter& null() { comma(); out_ += "null"; return *this; }

  template <class T>
  JsonWriter& field(const std::string& k, const T& v) { key(k); return value(v); }

  const std::string& str() const { return out_; }

 private:
  JsonWriter& open(char c) {
    comma();
    out_ += c;
    first_.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    first_.pop_back();
    out_ += '\n';
    out_.append(2 * first_.size(), ' ');
    out_ += c;
    return *this;
  }
  void comma() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_.empty()) {
      if (!first_.back()) out_ += ',';
      first_.back() = false;
      out_ += '\n';
      out_.append(2 * first_.size(), ' ');
    }
  }
  void string_literal(const std::string& s) {
    out_ += '"';
    for (unsigned char c : s) {
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\t': out_ += "\\t"; break;
        case '\r': out_ += "\\r"; break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out_ += buf;
          } else {
            out_ += static_cast<char>(c);
          }
      }
    }
    out_ += '"';
  }

  std::string out_;
  std::vector<bool> first_;
  bool after_key_ = false;
};

}  // namespace tilecast::bench
