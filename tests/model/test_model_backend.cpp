// Modelled backends on topologies, predicted sweeps and the error table.
#include <catch2/catch.hpp>

#include "tuner/model/model_backend.h"
#include "tuner/model/model_sweep.h"
#include "tuner/model/validation.h"

using namespace ddpscope::tuner;
using namespace ddpscope::tuner::model;

namespace {

LinkFit link_fit(const LinkCost& cost) {
  LinkFit f;
  f.cost = cost;
  return f;
}

Calibration gloo_calibration() {
  Calibration c;
  c.backend = "gloo";
  c.intra.cost = {30e-6, 1e-9, 0};  // 30 µs per step, 1 GB/s
  c.comm_rate_during_compute = 1;
  return c;
}

Topology shape(int nodes, int per_node, double inter_gbps = 0) {
  Topology t;
  t.nodes = nodes;
  t.ranks_per_node = per_node;
  t.inter.bandwidth_gbps = inter_gbps;
  return t;
}

// 64 gradients of 1 MiB, 500 µs of backward each.
Workload layers() {
  Workload w;
  w.name = "layers";
  w.forward_us = 10000;
  w.optimizer_us = 1000;
  for (int i = 0; i < 64; ++i) {
    w.params.push_back({"l" + std::to_string(i), 262144, ddpscope::Dtype::float32, 500});
    w.ready_order.push_back(size_t(63 - i));
  }
  return w;
}

}  // namespace

TEST_CASE("calibrated backend: the fitted link inside a node, the declared one between") {
  auto one = ModelBackend::calibrated(gloo_calibration(), shape(1, 4));
  // ring of 4: 6 · 30 µs + 1.5 · 1 MB · 1 ns
  CHECK(one.bucket_ms(1000000) == Approx((180e-6 + 1.5e-3) * 1000));
  auto two = ModelBackend::calibrated(gloo_calibration(), shape(2, 2, 1));
  // 1 Gbit/s between nodes: 8 ns per byte paces every ring step.
  CHECK(two.bucket_ms(1000000) == Approx((180e-6 + 1.5e6 * 8e-9) * 1000));
}

TEST_CASE("calibrated backend: an inter link fitted on an emulated topology") {
  auto c = gloo_calibration();
  c.inter = InterLinkFit{link_fit({300e-6, 9e-9, 0}), "2x2:inter=1gbit", 1};
  // On the topology it was fitted on: the fit itself paces every ring step.
  auto same = ModelBackend::calibrated(c, shape(2, 2, 1));
  CHECK(same.bucket_ms(1000000) == Approx((6 * 300e-6 + 1.5e6 * 9e-9) * 1000));
  // At 2 Gbit/s the wire's share of β (9 - 1 ns/B) halves; the machine's stays.
  auto faster = ModelBackend::calibrated(c, shape(2, 2, 2));
  CHECK(faster.bucket_ms(1000000) == Approx((6 * 300e-6 + 1.5e6 * 5e-9) * 1000));
  // It was measured as this ring, intra-node steps included: a fitted α below
  // the one-node fit's is the ring's own, not raised to the one-node α.
  c.inter->fit.cost.alpha_s = 20e-6;
  CHECK(ModelBackend::calibrated(c, shape(2, 2, 1)).bucket_ms(1000000) ==
        Approx((6 * 20e-6 + 1.5e6 * 9e-9) * 1000));
  // One node never crosses it; an unshaped inter link is the machine's own.
  CHECK(ModelBackend::calibrated(c, shape(1, 4)).bucket_ms(1000000) ==
        Approx((180e-6 + 1.5e-3) * 1000));
  CHECK(ModelBackend::calibrated(c, shape(2, 2)).bucket_ms(1000000) ==
        Approx((180e-6 + 1.5e-3) * 1000));
}

TEST_CASE("calibrated backend: the per-size ratios on the links they were measured on only") {
  auto c = gloo_calibration();
  c.intra.by_size = SizeCorrection({{250000, 1.2}, {1000000, 1.0}});
  c.inter = InterLinkFit{link_fit({300e-6, 9e-9, 0}), "2x2:inter=1gbit", 1};
  c.inter->fit.by_size = SizeCorrection({{250000, 0.8}});
  const double ring_1mb = (6 * 30e-6 + 1.5e6 * 1e-9) * 1000;  // 4 ranks: 250 kB per step
  CHECK(ModelBackend::calibrated(c, shape(1, 4)).bucket_ms(1000000) == Approx(ring_1mb * 1.2));
  // A declared intra link is not the one measured.
  auto declared = shape(1, 4);
  declared.intra.bandwidth_gbps = 8;
  CHECK(ModelBackend::calibrated(c, declared).bucket_ms(1000000) == Approx(ring_1mb));
  // Another algorithm: the fit alone.
  CHECK(
      ModelBackend::calibrated(c, shape(1, 4), Algorithm::recursive_doubling).bucket_ms(1000000) ==
      Approx(allreduce_s(Algorithm::recursive_doubling, 4, 1e6, c.intra.cost) * 1000));
  const double inter_1mb = (6 * 300e-6 + 1.5e6 * 9e-9) * 1000;
  CHECK(ModelBackend::calibrated(c, shape(2, 2, 1)).bucket_ms(1000000) == Approx(inter_1mb * 0.8));
  // At another bandwidth the wire share is scaled: the residual shape is not known there.
  const auto faster = ModelBackend::calibrated(c, shape(2, 2, 10));
  CHECK(faster.bucket_ms(1000000) == Approx((6 * 300e-6 + 1.5e6 * (1e-9 + 8e-9 / 10)) * 1000));
}

TEST_CASE("calibrated backend: the cores slow under compute, a shaped link does not") {
  auto c = gloo_calibration();
  c.comm_rate_during_compute = 0.5;
  // One node: the all-reduce is the cores' alone, slowed to the rate.
  CHECK(ModelBackend::calibrated(c, shape(1, 4)).bucket_comm_rate_during_compute(1000000) == 0.5);
  // Over 1 Gbit/s: 13.68 ms on the wire against 1.68 ms of the cores' (3.36
  // slowed): the wire paces it, at full speed.
  auto slow = ModelBackend::calibrated(c, shape(2, 2, 1));
  CHECK(slow.bucket_comm_rate_during_compute(1000000) == 1);
  // Over 4 Gbit/s: 0.18 + 3 = 3.18 ms with the wire, 3.36 ms for the cores
  // under compute: they pace it, at 3.18 / 3.36 of its stand-alone speed.
  auto fast = ModelBackend::calibrated(c, shape(2, 2, 4));
  CHECK(fast.bucket_comm_rate_during_compute(1000000) == Approx(3.18 / 3.36));
  // Over 10 Gbit/s the wire (0.8 ns/B) is faster than the cores: their rate.
  CHECK(ModelBackend::calibrated(c, shape(2, 2, 10)).bucket_comm_rate_during_compute(1000000) ==
        Approx(0.5));
  CHECK(ModelBackend::nccl_priors(shape(2, 2, 1), GpuArch::hopper)
            .bucket_comm_rate_during_compute(1000000) == 1);
}

TEST_CASE("calibrated backend, another algorithm: hierarchical on 2x4 over 1 Gbit/s") {
  auto t = shape(2, 4, 1);
  auto m = ModelBackend::calibrated(gloo_calibration(), t, Algorithm::hierarchical);
  const LinkCost intra{30e-6, 1e-9, 0}, inter{30e-6, 8e-9, 0};
  CHECK(m.bucket_ms(1000000) == Approx(hierarchical_s(t, 1e6, intra, inter) * 1000));
  // The leaders' ring moves S over the slow link once; the flat ring 2·7/8·S.
  CHECK(m.bucket_ms(1000000) < ModelBackend::calibrated(gloo_calibration(), t).bucket_ms(1000000));
}

TEST_CASE("predicted sweep: one row per bucket size, in the measured results' shape") {
  auto m = ModelBackend::calibrated(gloo_calibration(), shape(2, 2, 1));
  auto rows = predict_sweep(layers(), m, {1, 4, 16}, 1);
  REQUIRE(rows.size() == 3);
  for (const auto& r : rows) {
    CHECK(r.setting.backend == "model");
    CHECK(r.topology == m.topology().name());
    CHECK(r.nranks == 4);
    CHECK(r.iterations.size() == 1);
    CHECK(r.iter_ms_median >= (10000 + 64 * 500 + 1000) / 1000.0);
  }
  CHECK(rows[0].buckets > rows[2].buckets);
}

TEST_CASE("1x4 and 2x2 over 1 Gbit/s: the slow link makes the iteration clearly longer") {
  auto flat = predict_sweep(layers(), ModelBackend::calibrated(gloo_calibration(), shape(1, 4)),
                            {1, 4, 16, 64}, 1);
  auto split = predict_sweep(layers(), ModelBackend::calibrated(gloo_calibration(), shape(2, 2, 1)),
                             {1, 4, 16, 64}, 1);
  for (size_t i = 0; i < flat.size(); ++i)
    CHECK(split[i].iter_ms_median > 1.5 * flat[i].iter_ms_median);
}

TEST_CASE("NCCL priors: a bucket's time is NCCL's choice's time") {
  auto m = ModelBackend::nccl_priors(shape(8, 8, 400), GpuArch::hopper);
  CHECK(m.is_nccl());
  CHECK(m.bucket_ms(25 << 20) ==
        Approx(nccl_best_allreduce(m.cluster(), double(25 << 20)).time_us / 1000));
  CHECK(m.comm_rate_during_compute() == 1);
}

TEST_CASE("validation: pairs measured and predicted settings, median and max |error|") {
  auto row = [](std::string backend, double mb, double ms) {
    SettingResult r;
    r.setting = {backend, mb, 1};
    r.topology = "1x2";
    r.nranks = 2;
    r.iterations = {{ms, 0, 0}};
    r.iter_ms_median = ms;
    return r;
  };
  std::vector<SettingResult> measured{row("gloo", 1, 100), row("gloo", 4, 200),
                                      row("gloo", 16, 50)};
  std::vector<SettingResult> predicted{row("model", 1, 110), row("model", 4, 196),
                                       row("model", 16, 51), row("model", 64, 70)};
  auto v = validate_model(measured, predicted);
  REQUIRE(v.rows.size() == 3);
  CHECK(v.rows[0].error_pct == Approx(10));
  CHECK(v.rows[1].error_pct == Approx(-2));
  CHECK(v.median_abs_error_pct == Approx(2));
  CHECK(v.max_abs_error_pct == Approx(10));
}
