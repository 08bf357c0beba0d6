// The injector's interned names (NVTX domains and range names): one id per
// distinct string, stable across threads, with long names cut.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "injector/runtime/name_table.h"

using ddpscope::inject::name_table;
using ddpscope::inject::NameTable;

TEST_CASE("name table: one id per distinct name, and back") {
  NameTable& t = name_table();
  uint32_t step = t.intern("nt-step");
  CHECK(step != 0);
  CHECK(t.intern("nt-step") == step);
  CHECK(t.intern(std::string_view("nt-step")) == step);
  CHECK(t.intern(std::string("nt-step").c_str()) == step);  // by content, not address
  uint32_t forward = t.intern("nt-forward");
  CHECK(forward != step);
  CHECK(t.name(step) == "nt-step");
  CHECK(t.name(forward) == "nt-forward");
  CHECK(t.intern("nt-Step") != step);  // case matters
}

TEST_CASE("name table: empty and null are id 0, the empty name") {
  NameTable& t = name_table();
  CHECK(t.intern("") == 0);
  CHECK(t.intern(static_cast<const char*>(nullptr)) == 0);
  CHECK(t.name(0).empty());
}

TEST_CASE("name table: names longer than the limit are cut, and cut alike") {
  NameTable& t = name_table();
  std::string long_a(NameTable::kMaxLength, 'a');
  uint32_t id = t.intern(long_a + "-first-tail");
  CHECK(t.name(id) == long_a);
  CHECK(t.intern(long_a + "-other-tail") == id);  // same first kMaxLength bytes
  CHECK(t.intern(long_a) == id);
  std::string shorter(NameTable::kMaxLength - 1, 'a');
  CHECK(t.intern(shorter) != id);
}

TEST_CASE("name table: threads interning the same names at once agree") {
  constexpr int kThreads = 8, kNames = 500;
  std::vector<std::vector<uint32_t>> ids(kThreads, std::vector<uint32_t>(kNames));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kNames; ++i) {
        int n = (i * 7 + t * 13) % kNames;  // each thread in its own order
        ids[t][n] = name_table().intern("nt-concurrent-" + std::to_string(n));
      }
    });
  for (auto& th : threads) th.join();
  std::set<uint32_t> distinct;
  for (int n = 0; n < kNames; ++n) {
    for (int t = 1; t < kThreads; ++t) REQUIRE(ids[t][n] == ids[0][n]);
    CHECK(name_table().name(ids[0][n]) == "nt-concurrent-" + std::to_string(n));
    distinct.insert(ids[0][n]);
  }
  CHECK(distinct.size() == size_t(kNames));
  CHECK(distinct.count(0) == 0);
  CHECK(distinct.count(NameTable::kOverflow) == 0);
}
