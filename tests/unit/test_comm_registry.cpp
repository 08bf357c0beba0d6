// The injector's communicator registry: lock-free lookups by handle, and
// destroyed communicators forgotten so that a job creating and destroying
// communicators in a loop never fills it.
#include <algorithm>
#include <catch2/catch.hpp>
#include <memory>
#include <numeric>
#include <random>
#include <vector>

#include "injector/runtime/comm_registry.h"

using namespace ddpscope;
using namespace ddpscope::inject;

namespace {

// Distinct, aligned fake handles, as communicator pointers are.
const void* handle(size_t i) { return reinterpret_cast<const void*>(0x10000 + 64 * i); }

}  // namespace

TEST_CASE("comm registry: more communicators over time than it has slots") {
  auto reg = std::make_unique<CommRegistry>();
  constexpr size_t kRounds = 3 * CommRegistry::kSlots;
  for (size_t i = 0; i < kRounds; ++i) {
    // A few live at once, each destroyed a little after the next is made.
    REQUIRE(reg->put(handle(i), 1000 + i, 2, 0, 0, Backend::nccl) != nullptr);
    if (i >= 4) reg->forget(handle(i - 4));
  }
  for (size_t i = kRounds - 4; i < kRounds; ++i) {
    CommInfo* c = reg->find(handle(i));
    REQUIRE(c != nullptr);
    CHECK(c->comm_id == 1000 + i);
  }
  CHECK(reg->find(handle(0)) == nullptr);
  CHECK(reg->find(handle(kRounds - 5)) == nullptr);
}

TEST_CASE("comm registry: forgetting every communicator leaves no tombstone behind") {
  auto reg = std::make_unique<CommRegistry>();
  constexpr size_t kLive = CommRegistry::kSlots * 3 / 4;  // long probe clusters
  for (size_t i = 0; i < kLive; ++i)
    REQUIRE(reg->put(handle(i), i + 1, 4, 1, 0, Backend::nccl) != nullptr);
  std::vector<size_t> order(kLive);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(7));
  for (size_t k = 0; k < kLive; ++k) {
    reg->forget(handle(order[k]));
    if (k % 97 == 0)  // the ones still registered are still found, with their own data
      for (size_t j = k + 1; j < kLive; j += 31) {
        CommInfo* c = reg->find(handle(order[j]));
        REQUIRE(c != nullptr);
        CHECK(c->comm_id == order[j] + 1);
      }
  }
  CHECK(reg->used_slots() == 0);
}

TEST_CASE("comm registry: the first communicator's identity outlives it") {
  auto reg = std::make_unique<CommRegistry>();
  int rank = 0, size = 0, device = 0;
  Backend backend = Backend::unknown;
  CHECK_FALSE(reg->first_comm(&rank, &size, &device, &backend));
  reg->put(handle(1), 11, 8, 3, 5, Backend::nccl);
  reg->put(handle(2), 12, 2, 1, 5, Backend::nccl);
  reg->forget(handle(1));
  REQUIRE(reg->first_comm(&rank, &size, &device, &backend));
  CHECK(rank == 3);
  CHECK(size == 8);
  CHECK(device == 5);
  CHECK(backend == Backend::nccl);
  // A handle reused after its communicator was forgotten is a new one.
  CommInfo* again = reg->put(handle(1), 21, 4, 0, 5, Backend::nccl);
  REQUIRE(again != nullptr);
  CHECK(reg->find(handle(1))->comm_id == 21);
  CHECK(again->next_seq.load() == 0);
}
