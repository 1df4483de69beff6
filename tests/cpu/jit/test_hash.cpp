#include <gtest/gtest.h>

#include "jit/hash.hpp"

namespace tilecast::jit {
namespace {

TEST(JitHash, MatchesFnv1a128ReferenceValues) {
  EXPECT_EQ(fnv128("").hex(), "6c62272e07bb014262b821756295c58d");  // the offset basis
  EXPECT_EQ(fnv128("a").hex(), "d228cb696f1a8caf78912b704e4a8964");
  EXPECT_EQ(fnv128("foobar").hex(), "343e1662793c64bf6f0d3597ba446f18");
}

TEST(JitHash, IncrementalEqualsOneShot) {
  Fnv128 h;
  h.update("foo");
  h.update("bar");
  EXPECT_EQ(h.digest(), fnv128("foobar"));
}

TEST(JitHash, FieldsAreLengthPrefixed) {
  Fnv128 a, b;
  a.field("x", "ab");
  a.field("y", "c");
  b.field("x", "a");
  b.field("y", "bc");
  EXPECT_NE(a.digest(), b.digest());
}

}  // namespace
}  // namespace tilecast::jit
