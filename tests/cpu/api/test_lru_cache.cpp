// The bounded cache behind the plan cache: it keeps at most its capacity and forgets the least
// recently used entry first.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "api/lru_cache.hpp"

namespace tilecast::api {
namespace {

using Cache = LruCache<int, std::string, std::hash<int>, std::equal_to<int>>;

TEST(LruCache, KeepsAtMostItsCapacity) {
  Cache c(3);
  for (int i = 0; i < 100; ++i) c.insert(i, std::to_string(i));
  EXPECT_EQ(c.size(), 3u);
  EXPECT_EQ(c.find(0), nullptr);
  ASSERT_NE(c.find(99), nullptr);
  EXPECT_EQ(*c.find(99), "99");
}

TEST(LruCache, ForgetsTheLeastRecentlyUsed) {
  Cache c(2);
  c.insert(1, "a");
  c.insert(2, "b");
  ASSERT_NE(c.find(1), nullptr);  // 1 is now the most recent
  c.insert(3, "c");               // 2 goes
  EXPECT_EQ(c.find(2), nullptr);
  EXPECT_NE(c.find(1), nullptr);
  EXPECT_NE(c.find(3), nullptr);
  c.insert(3, "C");  // replacing keeps the size
  EXPECT_EQ(c.size(), 2u);
  EXPECT_EQ(*c.find(3), "C");
}

}  // namespace
}  // namespace tilecast::api
