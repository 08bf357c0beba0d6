#include "injector/runtime/counters.h"

#include <atomic>

namespace ddpscope::inject {
namespace {

std::atomic<uint64_t> g_counts[int(Counter::count_of_counters)];

constexpr const char* kNames[] = {
#define DDPSCOPE_COUNTER_NAME(name) #name,
    DDPSCOPE_COUNTERS(DDPSCOPE_COUNTER_NAME)
#undef DDPSCOPE_COUNTER_NAME
};

}  // namespace

void count(Counter c, uint64_t n) { g_counts[int(c)].fetch_add(n, std::memory_order_relaxed); }

uint64_t counter_value(Counter c) { return g_counts[int(c)].load(std::memory_order_relaxed); }

const char* counter_name(Counter c) { return kNames[int(c)]; }

}  // namespace ddpscope::inject
