// The injector's interned names (NVTX domains and range names): one id per
// distinct string, stable across threads, with long names cut.
#include <algorithm>
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

TEST_CASE("name table: a flood of new names is bounded, and old names keep their ids") {
  NameTable t;  // its own table: the flood must not fill the process's
  uint32_t early = t.intern("nt-flood-early");
  std::vector<uint32_t> ids;
  uint32_t accepted = 0;
  constexpr uint32_t kFlood = NameTable::kCapacity + 1000;  // more than fit, by far
  for (uint32_t i = 0; i < kFlood; ++i) {
    uint32_t id = t.intern("nt-flood-" + std::to_string(i));
    ids.push_back(id);
    accepted += id != NameTable::kOverflow;
  }
  // At most kMaxNames ids (0 is the empty name); probing may refuse a few before.
  CHECK(accepted + 1 <= NameTable::kMaxNames - 1);
  CHECK(accepted + 1 >= NameTable::kMaxNames * 99 / 100);
  CHECK(ids.back() == NameTable::kOverflow);
  CHECK(t.name(NameTable::kOverflow) == "(too many distinct names)");
  // What was interned stays interned, and by the same id.
  CHECK(t.intern("nt-flood-early") == early);
  for (uint32_t i = 0; i < kFlood; i += 997)
    if (ids[i] != NameTable::kOverflow) {
      CHECK(t.intern("nt-flood-" + std::to_string(i)) == ids[i]);
      CHECK(t.name(ids[i]) == "nt-flood-" + std::to_string(i));
    }
}

TEST_CASE("name table: names crowding one neighbourhood are probed a bounded distance") {
  NameTable t;
  // 300 names whose probes all start in the first 128 slots: one long cluster.
  std::vector<std::string> crowd;
  for (int i = 0; crowd.size() < 300; ++i) {
    std::string s = "nt-crowd-" + std::to_string(i);
    if (NameTable::home_of(s) < 128) crowd.push_back(s);
  }
  int accepted = 0;
  for (const auto& s : crowd) accepted += t.intern(s) != NameTable::kOverflow;
  CHECK(accepted >= 64);  // the cluster's start holds names
  CHECK(accepted < 300);  // past kMaxProbes from its home, a name is refused
  // A later name starting in the cluster's first half reads at most
  // kMaxProbes slots, all taken, and is refused; an unbounded probe would
  // walk on to the cluster's end.
  for (int i = 0, seen = 0; seen < 20; ++i) {
    std::string s = "nt-late-" + std::to_string(i);
    if (NameTable::home_of(s) >= 64) continue;
    ++seen;
    CHECK(t.probes_for(s) <= NameTable::kMaxProbes);
    CHECK(t.intern(s) == NameTable::kOverflow);
  }
}
