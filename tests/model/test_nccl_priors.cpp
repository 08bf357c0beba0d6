// NCCL's cost model (2.20.3 constants) against values worked out by hand.
#include <catch2/catch.hpp>

#include "tests/model/model_test_support.h"
#include "tuner/model/nccl_priors.h"

using namespace ddpscope::tuner;
using namespace ddpscope::tuner::model;
using namespace ddpscope::tuner::model::test;

TEST_CASE("cluster defaults: Hopper NVLink (18 links x 20.6 GB/s), 400 Gbit/s = 50 GB/s") {
  auto c = gpu_cluster_for(shape(8, 8, 400));
  CHECK(c.intra == IntraHw::nvlink);
  CHECK(c.intra_gbytes_per_s == Approx(370.8));
  CHECK(c.channels == 18);
  CHECK(c.net_gbytes_per_s == Approx(50));
  auto pcie = shape(1, 4);
  pcie.intra.bandwidth_gbps = 256;  // 32 GB/s: PCIe
  auto p = gpu_cluster_for(pcie);
  CHECK(p.intra == IntraHw::pci);
  CHECK(p.channels == 3);  // ceil(32 / 12)
}

TEST_CASE("channels stop at NCCL's 64 however fast the declared link (fuzz_topology's finding)") {
  auto fast = shape(2, 4);
  fast.intra.bandwidth_gbps = 6.7e46;  // once converted to an int channel count: overflow
  CHECK(gpu_cluster_for(fast).channels == 64);
}

TEST_CASE("one node of 8 H100s: ring and tree, Simple") {
  auto c = gpu_cluster_for(shape(1, 8));
  // Ring: busbw 370.8, algbw 370.8 * 8/14; latency 8.4 + 14 steps * 3.4.
  auto ring = nccl_allreduce_estimate(c, NcclAlgo::ring, NcclProto::simple, 1e9);
  CHECK(ring.latency_us == Approx(8.4 + 14 * 3.4));
  CHECK(ring.algbw_gbytes_per_s == Approx(370.8 * 8 / 14));
  CHECK(ring.time_us == Approx(56 + 1e9 / (1000 * 370.8 * 8 / 14)));
  // Tree: min(0.92 * 370.8, 18 * 38.7) / 2; latency 2 * 7 hops * 28; 1 GB is
  // past the size-correction table (log2(1e9 / 64) = 23).
  auto tree = nccl_allreduce_estimate(c, NcclAlgo::tree, NcclProto::simple, 1e9);
  CHECK(tree.latency_us == Approx(392));
  CHECK(tree.algbw_gbytes_per_s == Approx(0.92 * 370.8 / 2));
  // At 1 MB the tree's bandwidth takes the Simple correction .5 (log2(15625) = 13).
  auto tree_1mb = nccl_allreduce_estimate(c, NcclAlgo::tree, NcclProto::simple, 1e6);
  CHECK(tree_1mb.algbw_gbytes_per_s == Approx(0.92 * 370.8 / 2 * .5));
}

TEST_CASE("8 nodes x 8 H100s at 400 Gbit/s: latencies and bandwidths per pair") {
  auto c = gpu_cluster_for(shape(8, 8, 400));
  const double bytes = 1 << 30;
  // Ring/Simple: busbw = min(NVLink, net) = 50; algbw 50 * 64/126; latency
  // 8.4 + 110 intra steps * max(3.4, 3 x 1 µs net overhead) + 16 inter steps
  // * 14, times 1.4 for the multi-node ring plateau.
  auto rs = nccl_allreduce_estimate(c, NcclAlgo::ring, NcclProto::simple, bytes);
  CHECK(rs.latency_us == Approx((8.4 + 110 * 3.4 + 16 * 14) * 1.4));
  CHECK(rs.algbw_gbytes_per_s == Approx(50.0 * 64 / 126));
  // Ring/LL: min(20.4 LL cap, 50/4); latency 6.6 + 110 * max(.6, 1) + 16 * 2.7.
  auto rl = nccl_allreduce_estimate(c, NcclAlgo::ring, NcclProto::ll, 1024);
  CHECK(rl.algbw_gbytes_per_s == Approx(12.5 * 64 / 126));
  CHECK(rl.latency_us == Approx(6.6 + 110 + 43.2));
  // Tree/LL: min(0.92 * 50 / 3.8, 20.4) / 2, size-corrected (1 KiB: log 4 → .9);
  // latency 6.8 + 2 * (7 * .6 + 3 * 5).
  auto tl = nccl_allreduce_estimate(c, NcclAlgo::tree, NcclProto::ll, 1024);
  CHECK(tl.latency_us == Approx(6.8 + 2 * (7 * .6 + 3 * 5.0)));
  CHECK(tl.algbw_gbytes_per_s == Approx(46.0 / 3.8 / 2 * .9));
  // Ring/LL128: min(0.92 * 50, 18 * 36.7); latency 14 + 110 * 1.9 + 16 * 4.
  auto r128 = nccl_allreduce_estimate(c, NcclAlgo::ring, NcclProto::ll128, bytes);
  CHECK(r128.latency_us == Approx(14 + 110 * 1.9 + 16 * 4.0));
  CHECK(r128.algbw_gbytes_per_s == Approx(46.0 * 64 / 126));
}

TEST_CASE("NCCL's choice: low-latency tree for small buckets, ring/Simple for large") {
  auto c = gpu_cluster_for(shape(8, 8, 400));
  auto small = nccl_best_allreduce(c, 1024);
  CHECK(small.algo == NcclAlgo::tree);
  CHECK(small.proto == NcclProto::ll);
  auto large = nccl_best_allreduce(c, double(1 << 30));
  CHECK(large.algo == NcclAlgo::ring);
  CHECK(large.proto == NcclProto::simple);
  // Every candidate's time is at least the choice's.
  for (auto a : {NcclAlgo::tree, NcclAlgo::ring})
    for (auto p : {NcclProto::ll, NcclProto::ll128, NcclProto::simple}) {
      auto e = nccl_allreduce_estimate(c, a, p, 25e6);
      if (e.available) CHECK(e.time_us >= nccl_best_allreduce(c, 25e6).time_us);
    }
}

TEST_CASE("LL128 only over NVLink, one rank has nothing to reduce") {
  auto t = shape(2, 4, 100);
  t.intra.bandwidth_gbps = 256;
  auto pcie = gpu_cluster_for(t);
  CHECK_FALSE(nccl_allreduce_estimate(pcie, NcclAlgo::ring, NcclProto::ll128, 1e6).available);
  CHECK_FALSE(
      nccl_allreduce_estimate(gpu_cluster_for(shape(1, 1)), NcclAlgo::ring, NcclProto::simple, 1e6)
          .available);
}
