// CUPTI activity records -> our records, with hand-built records (the CUPTI
// headers are enough; no GPU, no libcupti).
#include <catch2/catch.hpp>
#include <cstring>

#include "injector/cupti/activity_convert.h"

using namespace ddpscope;
using namespace ddpscope::inject;

namespace {

template <typename T>
T zeroed() {
  T r;
  std::memset(&r, 0, sizeof r);
  return r;
}

CUpti_ActivityKernel10 kernel(const char* name, uint64_t start, uint64_t end, uint32_t corr) {
  auto k = zeroed<CUpti_ActivityKernel10>();
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = name;
  k.start = start;
  k.end = end;
  k.correlationId = corr;
  k.deviceId = 3;
  k.streamId = 17;
  return k;
}

const CUpti_Activity* as_activity(const void* r) {
  return reinterpret_cast<const CUpti_Activity*>(r);
}

}  // namespace

TEST_CASE("NCCL kernels are told from compute kernels by their demangled name") {
  CHECK(cupti::is_nccl_kernel("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
  CHECK(cupti::is_nccl_kernel("ncclSymkDevKernel_AllReduce_AGxLL_R"));
  CHECK(cupti::is_nccl_kernel("ncclKernel_AllReduce_RING_LL_Sum_float"));
  CHECK_FALSE(cupti::is_nccl_kernel("gemm_tile<float>"));
  CHECK_FALSE(cupti::is_nccl_kernel("my_ncclDevKernel_lookalike"));
  CHECK(cupti::kernel_display_name(
            "_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL19ncclDevKernelArgs4K") ==
        "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  CHECK(cupti::kernel_display_name("_Z9gemm_tileIfEvPT_i") == "gemm_tile<float>");
  CHECK(cupti::kernel_display_name("ncclSymkDevKernel_AllGather") == "ncclSymkDevKernel_AllGather");
  CHECK(cupti::kernel_display_name(nullptr).empty());
}

TEST_CASE("kernel records keep device, stream, times and CUPTI's correlation") {
  ActivityBatch out;
  auto nccl =
      kernel("_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL19ncclDevKernelArgs4K", 1000, 5000, 42);
  auto gemm = kernel("_Z9gemm_tileIfEvPT_i", 2000, 3000, 43);
  cupti::convert(as_activity(&nccl), 0, out);
  cupti::convert(as_activity(&gemm), 0, out);
  REQUIRE(out.kernels.size() == 2);
  const KernelRecord& k = out.kernels[0];
  CHECK(k.kind == KernelKind::comm);
  CHECK(k.name == "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
  CHECK(k.device == 3);
  CHECK(k.stream == 17);
  CHECK(k.start_ns == 1000);
  CHECK(k.end_ns == 5000);
  CHECK(k.correlation == 42);
  CHECK(out.kernels[1].kind == KernelKind::compute);
}

TEST_CASE("CUPTI's clock is moved onto ours by the offset, a missing stamp stays missing") {
  ActivityBatch out;
  auto k = kernel("ncclDevKernel_Broadcast_RING_LL", 1000, 0, 1);
  cupti::convert(as_activity(&k), -400, out);
  REQUIRE(out.kernels.size() == 1);
  CHECK(out.kernels[0].start_ns == 600);
  CHECK(out.kernels[0].end_ns == kNoTime);
}

TEST_CASE("memcpy, peer memcpy and memset records become copy activities") {
  ActivityBatch out;
  auto m = zeroed<CUpti_ActivityMemcpy6>();
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
  m.start = 10, m.end = 20, m.correlationId = 7, m.deviceId = 1, m.streamId = 5;
  auto p = zeroed<CUpti_ActivityMemcpyPtoP4>();
  p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p.start = 30, p.end = 45, p.correlationId = 8, p.deviceId = 1, p.streamId = 5;
  auto s = zeroed<CUpti_ActivityMemset4>();
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.start = 50, s.end = 51, s.correlationId = 9, s.deviceId = 1, s.streamId = 6;
  for (const void* r : {(const void*)&m, (const void*)&p, (const void*)&s})
    cupti::convert(as_activity(r), 0, out);
  REQUIRE(out.kernels.size() == 3);
  CHECK(out.kernels[0].kind == KernelKind::memcpy);
  CHECK(out.kernels[0].name == "memcpy DtoD");
  CHECK(out.kernels[1].name == "memcpy PtoP");
  CHECK(out.kernels[1].correlation == 8);
  CHECK(out.kernels[2].kind == KernelKind::memset);
  CHECK(out.kernels[2].stream == 6);
}

TEST_CASE("external correlation records of our kind become links, others are ignored") {
  ActivityBatch out;
  auto ours = zeroed<CUpti_ActivityExternalCorrelation>();
  ours.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  ours.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
  ours.externalId = 1234;
  ours.correlationId = 42;
  auto theirs = ours;  // e.g. an OpenACC or Kineto id on the same call
  theirs.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1;
  theirs.externalId = 99;
  cupti::convert(as_activity(&ours), 0, out);
  cupti::convert(as_activity(&theirs), 0, out);
  REQUIRE(out.links.size() == 1);
  CHECK(out.links[0].correlation == 42);
  CHECK(out.links[0].external == 1234);
  CHECK(out.kernels.empty());
}

TEST_CASE("overhead records are summed, API records add nothing") {
  ActivityBatch out;
  auto o = zeroed<CUpti_ActivityOverhead3>();
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.start = 100, o.end = 350;
  cupti::convert(as_activity(&o), 0, out);
  cupti::convert(as_activity(&o), 0, out);
  auto api = zeroed<CUpti_ActivityAPI>();
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  cupti::convert(as_activity(&api), 0, out);
  CHECK(out.overhead_ns == 500);
  CHECK(out.kernels.empty());
  CHECK(out.links.empty());
}
