// A bounded map that forgets its least recently used entry first. Not thread-safe: the owner
// holds a lock around it.
#pragma once

#include <cstddef>
#include <list>
#include <unordered_map>
#include <utility>

namespace tilecast::api {

template <class Key, class Value, class Hash, class Equal>
class LruCache {
 public:
  explicit LruCache(size_t capacity) : capacity_(capacity ? capacity : 1) {}

  // The value of `key`, now the most recently used; null when absent.
  Value* find(const Key& key) {
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    order_.splice(order_.begin(), order_, it->second);
    return &it->second->second;
  }

  // Inserts (or replaces) the value of `key`; the least recently used entry goes when full.
  Value& insert(const Key& key, Value value) {
    if (Value* v = find(key)) return *v = std::move(value);
    order_.emplace_front(key, std::move(value));
    index_.emplace(key, order_.begin());
    if (order_.size() > capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    return order_.front().second;
  }

  size_t size() const { return order_.size(); }
  size_t capacity() const { return capacity_; }

 private:
  using Entry = std::pair<Key, Value>;
  size_t capacity_;
  std::list<Entry> order_;
  std::unordered_map<Key, typename std::list<Entry>::iterator, Hash, Equal> index_;
};

}  // namespace tilecast::api
