// Modelled backends on topologies, predicted sweeps and the error table.
#include <catch2/catch.hpp>

#include "tests/model/model_test_support.h"
#include "tuner/model/model_backend.h"
#include "tuner/model/model_sweep.h"
#include "tuner/model/validation.h"

using namespace ddpscope::tuner;
using namespace ddpscope::tuner::model;
using namespace ddpscope::tuner::model::test;

namespace {

Calibration gloo_calibration() {
  Calibration c;
  c.backend = "gloo";
  c.intra.cost = {30e-6, 1e-9, 0};  // 30 µs per step, 1 GB/s
  c.comm_rate_during_compute = 1;
  return c;
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
  // At 2 Gbit/s the wire's frames take 8 / 2 · 1547 / 1448 = 4.2735 ns/B;
  // what the fit took beyond the 1 Gbit/s wire's 8.547 (0.453) stays.
  CHECK(shaped_wire_s_per_byte(1) == Approx(8.547e-9).epsilon(1e-4));
  CHECK(shaped_wire_s_per_byte(0.4) == Approx(21.368e-9).epsilon(1e-4));
  auto faster = ModelBackend::calibrated(c, shape(2, 2, 2));
  CHECK(faster.bucket_ms(1000000) == Approx((6 * 300e-6 + 1.5e6 * 4.7265e-9) * 1000).epsilon(1e-4));
  // A fit whose time is within its wire's (6 · 300 µs + 1.5 MB · 7 ns =
  // 12.3 ms, the wire 12.82): its steps went on while the bytes moved, so
  // at 400 Mbit/s the wire's time alone.
  c.inter->fit.cost.beta_s_per_byte = 7e-9;
  CHECK(ModelBackend::calibrated(c, shape(2, 2, 0.4)).bucket_ms(1000000) ==
        Approx(1.5e6 * 21.368e-9 * 1000).epsilon(1e-4));
  c.inter->fit.cost.beta_s_per_byte = 9e-9;
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
  c.inter->fit.by_size = SizeCorrection({{250000, 1.2}});
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
  CHECK(ModelBackend::calibrated(c, shape(2, 2, 1)).bucket_ms(1000000) == Approx(inter_1mb * 1.2));
  // At another bandwidth the wire's time there, plus what was measured at
  // this size beyond the fitted bandwidth's wire (its ratio included).
  const double wire_1g = 1.5e6 * 8.547e-9 * 1000, wire_10g = wire_1g / 10;
  const auto faster = ModelBackend::calibrated(c, shape(2, 2, 10));
  CHECK(faster.bucket_ms(1000000) == Approx(wire_10g + inter_1mb * 1.2 - wire_1g).epsilon(1e-4));
}

TEST_CASE("calibrated backend: every rank computes under the calibrated delays, across nodes too") {
  auto c = gloo_calibration();
  c.cores = 2;
  c.step_delay_ms = 2;
  // 2x2 over a slow link: one 64 MiB bucket at 100 Mbit/s, launched when
  // backward ends, leaves the senders across the link seconds ahead of the
  // others; still every compute interval keeps its 2 ms: forward 10 + 2,
  // 64 steps of 0.5 + 2, optimizer 1 + 2, besides what is exposed.
  const auto p = predict_sweep(layers(), ModelBackend::calibrated(c, shape(2, 2, 0.1)), {64}, 1);
  CHECK(p[0].iter_ms_median - p[0].exposed_ms_median == Approx(12 + 64 * 2.5 + 3));
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

namespace {

// 4 ranks on 2 cores: 1 ms per step, 1 ns/B; a step of compute late by
// `alone_ms`, by `under_comm_ms` more beside an all-reduce; communication
// at half speed.
Calibration four_ranks_on_two_cores(double alone_ms, double under_comm_ms) {
  auto c = gloo_calibration();
  c.intra.cost = {1e-3, 1e-9, 0};
  c.points = {CommObservation{Algorithm::ring, 4, {1e6}, 0.0075}};
  c.cores = 2;
  c.step_delay_ms = alone_ms;
  c.step_delay_under_comm_ms = under_comm_ms;
  c.comm_rate_during_compute = 0.5;
  return c;
}

}  // namespace

TEST_CASE("calibrated backend: another rank count on the calibrated cores") {
  auto c = four_ranks_on_two_cores(1.0, 0.8);
  // As calibrated: ring of 4, 6 · 1 ms + 1.5 · 1 MB · 1 ns.
  const auto four = ModelBackend::calibrated(c, shape(1, 4));
  CHECK(four.bucket_ms(1000000) == Approx(7.5));
  CHECK(four.step_delay_ms() == 1.0);
  CHECK(four.step_delay_under_comm_ms() == 0.8);
  // 2 ranks: each backend thread has a whole core, twice the speed: ring of
  // 2, 2 · 0.5 ms + 1 MB · 0.5 ns; compute on time alone, beside an
  // all-reduce late by half the calibrated extra; the rate from the cores.
  const auto two = ModelBackend::calibrated(c, shape(1, 2));
  CHECK(two.bucket_ms(1000000) == Approx(1.5));
  CHECK(two.step_delay_ms() == 0);
  CHECK(two.step_delay_under_comm_ms() == Approx(0.4));
  CHECK(two.comm_rate_during_compute() == 0.5);
  // Measured with 600 µs steps, 1 ms late: 4 ranks had 1.5 cores (other work
  // the rest), on which 2 ranks are late by a fifth of 4's (core_sharing).
  c.step_delay_step_us = 600;
  const auto busy = ModelBackend::calibrated(c, shape(1, 2));
  CHECK(busy.step_delay_ms() == Approx(0.2));
  CHECK(busy.step_delay_under_comm_ms() == Approx(0.4));
  CHECK(busy.bucket_ms(1000000) == Approx(1.5));
  c.step_delay_step_us = 0;
  // Over a shaped link fitted on 4 ranks: the steps' scheduling halves, the
  // wire's bytes do not (2x1: ring of 2, 2 · 150 µs + 1 MB · 9 ns).
  c.inter = InterLinkFit{link_fit({300e-6, 9e-9, 0}), "2x2:inter=1gbit", 1};
  CHECK(ModelBackend::calibrated(c, shape(2, 1, 1)).bucket_ms(1000000) ==
        Approx((2 * 150e-6 + 1e6 * 9e-9) * 1000));
  // MPI progresses only inside MPI calls, whatever the cores.
  c.backend = "mpi";
  c.comm_rate_during_compute = 1e-3;
  CHECK(ModelBackend::calibrated(c, shape(1, 2)).comm_rate_during_compute() == 1e-3);
}

TEST_CASE("calibrated backend: fewer ranks no faster than two ranks measured on the node") {
  // 4 ranks on 2 cores: 1 ms per step, 1 ns/B; 2 ranks measured beside
  // them: 0.8 ms per step, 1.2 ns/B (their steps wait for one another, not
  // for the cores, so sharing the cores less does not speed them up).
  auto c = gloo_calibration();
  c.intra.cost = {1e-3, 1e-9, 0};
  c.points = {CommObservation{Algorithm::ring, 4, {1e6}, 0.0075}};
  c.cores = 2;
  c.intra_pair = link_fit({0.8e-3, 1.2e-9, 0});
  // 2 ranks: the cores' share would give 2 · 0.5 ms + 1 MB · 0.5 ns (1.5
  // ms); the pair's 2 · 0.8 ms + 1 MB · 1.2 ns (2.8 ms) is slower.
  CHECK(ModelBackend::calibrated(c, shape(1, 2)).bucket_ms(1000000) == Approx(2.8));
  // 4 ranks: the cores' 7.5 ms against the pair's pace on a ring of 4
  // (6 · 0.8 + 1.5 · 1.2 = 6.6): the cores'.
  CHECK(ModelBackend::calibrated(c, shape(1, 4)).bucket_ms(1000000) == Approx(7.5));
  // 3 ranks: the cores' 4 · 0.75 + 4/3 · 0.75 = 4.0 against the pair's
  // 4 · 0.8 + 4/3 · 1.2 = 4.8: the pair's.
  CHECK(ModelBackend::calibrated(c, shape(1, 3)).bucket_ms(1000000) == Approx(4.8));
  // Each with its own ratios: the pair's 1.5 at 0.5 MB per step (2 ranks,
  // 1 MB) makes it 4.2 ms.
  c.intra_pair->by_size = SizeCorrection({{500000, 1.5}});
  CHECK(ModelBackend::calibrated(c, shape(1, 2)).bucket_ms(1000000) == Approx(4.2));
}

TEST_CASE("calibrated backend: two ranks take their own probe's step delays, measured") {
  // Steps of 600 µs 1 ms late (1.5 cores, as the probe reads them): scaled
  // to 2 ranks, late by L/3 and half the extra under communication.
  auto c = four_ranks_on_two_cores(1.0, 2.0);
  c.step_delay_step_us = 600;
  const auto scaled = ModelBackend::calibrated(c, shape(1, 2));
  CHECK(scaled.step_delay_ms() == Approx(0.2));
  CHECK(scaled.step_delay_under_comm_ms() == Approx(1.0));
  // With the pair's probe, 2 ranks take what it measured; 4 ranks and 3
  // keep theirs (measured, and scaled from 4).
  c.pair_step_delays = Calibration::StepDelays{0.05, 0.3};
  const auto pair = ModelBackend::calibrated(c, shape(1, 2));
  CHECK(pair.step_delay_ms() == 0.05);
  CHECK(pair.step_delay_under_comm_ms() == 0.3);
  CHECK(ModelBackend::calibrated(c, shape(2, 1, 1)).step_delay_ms() == 0.05);  // 2 ranks anywhere
  CHECK(ModelBackend::calibrated(c, shape(1, 4)).step_delay_ms() == 1.0);
  CHECK(ModelBackend::calibrated(c, shape(1, 3)).step_delay_ms() != 0.05);
}

TEST_CASE("calibrated backend: another bandwidth, the wire and the path's CPUs in a row") {
  // Two stages with no room between: a + b - ab / (a + b).
  CHECK(tandem_s_per_byte(8, 0) == 8);
  CHECK(tandem_s_per_byte(4, 4) == 6);
  CHECK(tandem_s_per_byte(6, 3) == 7);
  CHECK(tandem_s_per_byte(0, 0) == 0);
  auto c = gloo_calibration();
  c.inter = InterLinkFit{link_fit({300e-6, 9e-9, 0, true}), "2x2:inter=1gbit", 1};
  c.inter_path = InterLinkFit{link_fit({300e-6, 3e-9, 0, true}), "2x2", 0};
  auto ms = [&](double gbps) {
    return ModelBackend::calibrated(c, shape(2, 2, gbps)).bucket_ms(1000000);
  };
  // Overlapped: max(6 · 300 µs, 1.5 MB · β). At 1 Gbit/s the fit itself
  // (9 ns/B, below the wire 8.547 and the path 3 in a row: 9.326, nothing
  // beyond). At 2 Gbit/s 4.2735 and 3 in a row: 5.5109 ns/B; at 4, 3.8888.
  CHECK(ms(1) == Approx(1.5e6 * 9e-9 * 1000));
  CHECK(ms(2) == Approx(1.5e6 * 5.5109e-9 * 1000).epsilon(1e-4));
  CHECK(ms(4) == Approx(1.5e6 * 3.8888e-9 * 1000).epsilon(1e-4));
  // A path whose steps take longer than a faster wire's bytes: no
  // bandwidth beats the unshaped ring (max(6 · 2 ms, 1.5 MB · 3 ns) = 12 ms).
  c.inter_path->fit.cost.alpha_s = 2e-3;
  CHECK(ms(2) == Approx(12));
  CHECK(ms(1) == Approx(1.5e6 * 9e-9 * 1000));  // the fit, where it was fitted
  c.inter_path->fit.cost.alpha_s = 300e-6;
  // Without the path: the wire alone, plus the fit's 0.453 beyond its wire.
  c.inter_path.reset();
  CHECK(ms(4) == Approx(1.5e6 * 2.5898e-9 * 1000).epsilon(1e-4));
}

TEST_CASE("calibrated backend: compute slows a wire-paced all-reduce only past its CPU need") {
  auto c = gloo_calibration();
  c.cores = 2;
  c.comm_rate_during_compute = 0.5;
  c.inter = InterLinkFit{link_fit({300e-6, 9e-9, 0, true}), "2x2:inter=1gbit", 1};
  c.inter_path = InterLinkFit{link_fit({300e-6, 3e-9, 0, true}), "2x2", 0};
  // 4x1 over the fitted 1 Gbit/s, 1 MB: the ring's 1.5 MB at 9 ns/B, 13.5
  // ms; unshaped, max(6 · 300 µs, 1.5 MB at 3 ns/B) = 4.5 ms of it the CPUs'.
  const auto shaped = ModelBackend::calibrated(c, shape(4, 1, 1));
  CHECK(shaped.bucket_ms(1000000) == Approx(13.5));
  CHECK(shaped.cpu_share(1000000) == Approx(1.0 / 3));
  // Half the CPU while computing, a third needed: the wire still paces it.
  CHECK(shaped.comm_rate_while_computing(1.0 / 3) == 1);
  // Needing 0.8 of it: 0.5 / 0.8.
  CHECK(shaped.comm_rate_while_computing(0.8) == Approx(0.625));
  // CPU-bound: the calibrated rate.
  CHECK(shaped.comm_rate_while_computing(1) == Approx(0.5));
  // One node, and a link with no unshaped path measured: all the CPUs'.
  CHECK(ModelBackend::calibrated(c, shape(1, 4)).cpu_share(1000000) == 1);
  auto no_path = c;
  no_path.inter_path.reset();
  CHECK(ModelBackend::calibrated(no_path, shape(4, 1, 1)).cpu_share(1000000) == 1);
  // MPI moves nothing while the rank computes, whatever its CPU needs.
  auto mpi = c;
  mpi.backend = "mpi";
  mpi.comm_rate_during_compute = 0.001;
  CHECK(ModelBackend::calibrated(mpi, shape(4, 1, 1)).comm_rate_while_computing(0.2) ==
        Approx(0.001));
  // In a predicted sweep the all-reduces under backward keep the wire's
  // pace: the iteration is shorter than with every byte the CPUs' work.
  const auto paced = predict_sweep(layers(), shaped, {8}, 1);
  const auto cpu =
      predict_sweep(layers(), ModelBackend::calibrated(no_path, shape(4, 1, 1)), {8}, 1);
  CHECK(paced[0].iter_ms_median < cpu[0].iter_ms_median - 5);
}
