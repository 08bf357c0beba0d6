#include "profiler/analysis/analyze.h"

#include <algorithm>
#include <cmath>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <utility>

#include "profiler/analysis/ddp_account.h"
#include "profiler/analysis/fsdp_account.h"
#include "profiler/analysis/hangs.h"
#include "profiler/analysis/kernel_overlap.h"
#include "profiler/analysis/mismatches.h"
#include "profiler/analysis/nccl_choices.h"
#include "profiler/analysis/op_summary.h"
#include "profiler/analysis/rank_view.h"
#include "profiler/analysis/recommend.h"
#include "profiler/analysis/stragglers.h"
#include "profiler/core/progress.h"
#include "profiler/core/stats.h"
#include "profiler/store/sqlite.h"

namespace ddpscope::analysis {
namespace {

// How each rank ended: the launcher's account where `record --nproc` kept
// one, and whether the rank's writer made its final flush.
void rank_endings(RunAnalysis& run, store::RunReader& reader,
                  const std::vector<ProcessRecord>& procs) {
  std::map<int, RankExitRecord> exits;
  for (const auto& e : reader.rows<RankExitRecord>()) exits[e.rank] = e;
  std::map<int, bool> finalized;
  for (const auto& p : procs) finalized[p.rank] = p.finalized != 0;
  for (auto& r : run.ranks) {
    r.finalized = finalized[r.rank];
    if (auto e = exits.find(r.rank); e != exits.end())
      r.exit_code = e->second.exit_code, r.signal = e->second.signal;
  }
}

// The communicator DDP reduces gradients on: the one with the most all-reduce
// bytes on this rank.
uint64_t ddp_comm(std::span<const Call> mine) {
  std::map<uint64_t, uint64_t> bytes;
  for (const auto& c : mine)
    if (c.op == Op::allreduce && !is_fsdp(c.role) && c.role != CollectiveRole::user)
      bytes[c.comm_id] += c.bytes;
  return busiest_comm(bytes);
}

std::vector<Interval> query_intervals(store::RunReader& reader, const std::string& sql, int rank) {
  std::vector<Interval> out;
  store::Statement st(reader.part_of_rank(rank).connection(), sql);
  st.bind(1, int64_t(rank));
  while (st.step()) out.push_back({st.time(0), st.time(1)});
  return out;
}

// Without DDP's account, the calls in the pattern's iterations are taken for
// buckets, so the role summary says what the report counted. `at`: where
// each of v.ddp is in `mine`.
void mark_pattern_buckets(RankView& v, std::span<Call> mine, const std::vector<size_t>& at) {
  for (const auto& it : v.split.iterations)
    for (size_t j = it.first; j < it.first + it.count; ++j)
      v.ddp[j].role = mine[at[j]].role = CollectiveRole::ddp_bucket;
}

// `calls` ordered by rank, stably (a rank's calls keep their order), in two
// passes: the ranks are a few thousand values at most, and their calls come
// in long runs (rank files read together come file by file, in the merge's
// order, not by rank), where a comparison sort of millions took seconds.
void order_by_rank(std::vector<Call>& calls) {
  std::map<int, size_t> next;  // rank -> where its next call goes
  for (const auto& c : calls) ++next[c.rank];
  size_t at = 0;
  for (auto& [rank, n] : next) n = std::exchange(at, at + n);
  std::vector<Call> out(calls.size());
  auto slot = next.end();
  for (auto& c : calls) {
    if (slot == next.end() || slot->first != c.rank) slot = next.find(c.rank);
    out[slot->second++] = c;
  }
  calls = std::move(out);
}

// Each rank's calls as a slice of `calls`, which this orders by rank (stably:
// a rank's calls keep their order). Per-rank work then costs its own calls,
// not ranks x calls (at 1,024 ranks the difference is minutes).
std::map<int, std::span<Call>> calls_by_rank(std::vector<Call>& calls) {
  auto by_rank = [](const Call& a, const Call& b) { return a.rank < b.rank; };
  // A merged run holds them rank by rank already: a check, not a sort.
  if (!std::is_sorted(calls.begin(), calls.end(), by_rank)) order_by_rank(calls);
  std::map<int, std::span<Call>> out;
  for (size_t i = 0, j = 0; i < calls.size(); i = j) {
    while (j < calls.size() && calls[j].rank == calls[i].rank) ++j;
    out[calls[i].rank] = std::span<Call>(calls.data() + i, j - i);
  }
  return out;
}

std::vector<Call> buckets_of(std::span<const Call> mine, int instance) {
  std::vector<Call> out;
  for (const auto& c : mine)
    if (c.role == CollectiveRole::ddp_bucket && c.instance == instance) out.push_back(c);
  std::stable_sort(out.begin(), out.end(), [](const Call& a, const Call& b) {
    return a.group != b.group ? a.group < b.group : a.seq < b.seq;
  });
  return out;
}

// From DDP's own account: the primary instance's backward passes are the
// rank's iterations; other instances' buckets are kept for their own stats.
bool view_from_account(RankView& v, std::span<const Call> mine, const RankAccount* acc) {
  if (!acc || acc->primary < 0) return false;
  v.from_account = true;
  v.ddp = buckets_of(mine, acc->primary);
  v.split = split_by_backward(v.ddp, *acc);
  for (int instance : acc->classified) {
    if (instance == acc->primary) continue;
    InstanceCalls o{instance, buckets_of(mine, instance), {}};
    o.split = split_by_backward(o.ddp, *acc);
    v.others.push_back(std::move(o));
  }
  return true;
}

// `mine`: this rank's calls (a slice of the run's, which it may mark). A rank
// with FSDP's account and no DDP's gets no DDP inferred from the pattern: its
// all-reduces are FSDP's (Gloo carries reduce-scatters as all-reduces) or
// the user's.
RankView make_view(store::RunReader& reader, std::span<Call> mine, int rank,
                   std::vector<Interval> compute, const RankAccount* account, bool fsdp) {
  RankView v;
  v.rank = rank;
  v.compute = union_of(std::move(compute));
  v.compute_from_kernels = !v.compute.empty();
  if (view_from_account(v, mine, account)) {
    if (!v.compute_from_kernels) v.compute = backward_windows(v);
    return v;
  }
  if (fsdp) return v;
  uint64_t comm = ddp_comm(mine);
  std::vector<size_t> at;  // the busiest communicator's all-reduces in `mine`, by seq
  for (size_t i = 0; i < mine.size(); ++i)
    // The user's own all-reduces (the hook's regions say so) are no bucket.
    if (mine[i].op == Op::allreduce && mine[i].comm_id == comm && !is_fsdp(mine[i].role) &&
        mine[i].role != CollectiveRole::user)
      at.push_back(i);
  std::sort(at.begin(), at.end(), [&](size_t a, size_t b) { return mine[a].seq < mine[b].seq; });
  v.ddp.reserve(at.size());
  for (size_t i : at) v.ddp.push_back(mine[i]);
  auto steps = union_of(query_intervals(
      reader,
      "SELECT start_ns, end_ns FROM ranges WHERE rank = ? AND (name LIKE 'step%' OR name LIKE "
      "'iteration%' OR name LIKE 'train_step%') AND start_ns IS NOT NULL AND end_ns IS NOT NULL "
      "ORDER BY start_ns",
      rank));
  v.split = steps.size() >= 2 ? split_by_ranges(v.ddp, steps) : split_iterations(v.ddp);
  mark_pattern_buckets(v, mine, at);
  if (!v.compute_from_kernels) v.compute = backward_windows(v);
  return v;
}

void size_classes(const std::vector<Call>& calls, RunAnalysis& run) {
  std::map<std::tuple<Op, uint64_t, int>, std::vector<double>> groups;
  for (const auto& c : calls)
    groups[{c.op, c.bytes, c.nranks}].push_back(double(c.end - c.start) / 1e3);
  for (auto& [key, d] : groups) {
    SizeClassStats s;
    std::tie(s.op, s.bytes, s.nranks) = key;
    s.calls = d.size();
    s.median_us = stats::quantile(d, 0.5);
    s.p95_us = stats::quantile(d, 0.95);
    if (s.median_us > 0 && s.bytes > 0) {
      s.algbw_gbps = double(s.bytes) / (s.median_us * 1e3);
      s.busbw_gbps = s.algbw_gbps * busbw_factor(s.op, s.nranks);
    }
    run.collectives.push_back(s);
  }
}

void iteration_summary(RunAnalysis& run, const std::vector<RankView>& views) {
  std::vector<double> iter, comm, exposed, busy, counts, warm, shadow;
  for (const auto& v : views) {
    auto stats = iteration_stats(v);
    auto n_shadow = std::count_if(stats.begin(), stats.end(), [](auto& s) { return s.shadow; });
    counts.push_back(double(stats.size() - size_t(n_shadow)));
    shadow.push_back(double(n_shadow));
    warm.push_back(
        double(std::count_if(stats.begin(), stats.end(), [](auto& s) { return s.warmup; })));
    for (const auto& s : stats) {
      if (!s.warmup && !s.shadow) {
        if (s.iter_ms > 0) iter.push_back(s.iter_ms);
        comm.push_back(s.comm_ms);
        exposed.push_back(s.exposed_ms);
        busy.push_back(s.comm_busy_ms);
      }
      run.iteration_list.push_back(s);
    }
  }
  auto& it = run.iterations;
  // Counts are whole: the median over ranks rounded, halves up.
  it.count = int(std::lround(stats::median(counts)));
  it.warmup = int(std::lround(stats::median(warm)));
  it.shadow = int(std::lround(stats::median(shadow)));
  it.median_ms = stats::quantile(iter, 0.5);
  it.p95_ms = stats::quantile(iter, 0.95);
  double sum = 0;
  for (double x : iter) sum += x;
  it.mean_ms = iter.empty() ? 0 : sum / double(iter.size());
  it.comm_median_ms = stats::quantile(comm, 0.5);
  it.exposed_median_ms = stats::quantile(exposed, 0.5);
  it.busy_median_ms = stats::quantile(busy, 0.5);
}

void rank_iterations(RunAnalysis& run, const std::vector<RankView>& views) {
  for (auto& r : run.ranks)
    for (const auto& v : views)
      if (v.rank == r.rank)
        for (const auto& it : v.split.iterations)
          ++(it.shadow ? r.shadow_iterations : r.iterations);
}

// The lowest rank's account of each DDP instance; without any account, the
// pattern's one instance.
std::vector<DdpInstanceSummary> ddp_instances(const std::map<int, RankAccount>& accounts,
                                              const std::vector<RankView>& views) {
  std::vector<DdpInstanceSummary> out;
  for (const auto& [rank, acc] : accounts) {
    if (acc.instances.empty()) continue;
    for (const auto& [instance, f] : acc.instances) {
      DdpInstanceSummary s = f.summary;
      s.rebuilt = !f.rebuilt_buckets.empty();
      out.push_back(s);
    }
    return out;
  }
  for (const auto& v : views)
    if (!v.split.pattern.empty()) {
      DdpInstanceSummary s;
      s.bucket_bytes = v.split.pattern;
      s.rebuilt = std::any_of(v.split.iterations.begin(), v.split.iterations.end(),
                              [](const Iteration& it) { return it.warmup; });
      out.push_back(s);
      break;
    }
  return out;
}

// HTA's overlap figure per rank (rank -> percent), from the compute union
// the views hold; taken as soon as the views are made, so that the kernels
// are not held beside the lateness's maps.
// `comm`: the device spans of collectives without kernel rows.
// `kernels`: every rank's communication kernels.
std::map<int, double> kernel_overlap_by_rank(const std::vector<RankView>& views,
                                             std::map<int, std::vector<Interval>> comm,
                                             std::map<int, std::vector<Interval>> kernels) {
  for (auto& [rank, k] : kernels) {
    comm[rank].insert(comm[rank].end(), k.begin(), k.end());
    k = {};
  }
  static const std::vector<Interval> kNone;
  std::map<int, double> out;
  for (auto& entry : comm) {
    const int rank = entry.first;
    auto v = std::find_if(views.begin(), views.end(), [&](auto& x) { return x.rank == rank; });
    bool from_kernels = v != views.end() && v->compute_from_kernels;
    out[rank] = kernel_overlap(std::move(entry.second), from_kernels ? v->compute : kNone).pct();
  }
  return out;
}

std::vector<RoleStats> role_stats(const std::vector<Call>& calls) {
  std::map<CollectiveRole, RoleStats> by;
  for (const auto& c : calls) {
    RoleStats& s = by[c.role];
    s.role = c.role;
    ++s.calls;
    s.bytes += c.bytes;
    s.total_ms += double(c.end - c.start) / 1e6;
  }
  std::vector<RoleStats> out;
  for (auto& [role, s] : by) out.push_back(s);
  return out;
}

// The run as a whole: its command, ranks, world size and backend (the one
// most ranks used).
void describe_run(RunAnalysis& run, store::RunReader& reader,
                  const std::vector<ProcessRecord>& procs) {
  run.path = reader.path();
  run.command = reader.meta()["command_line"];
  run.ranks_recorded = int(procs.size());
  std::map<std::string, int> backends;
  for (const auto& p : procs) {
    run.world_size = std::max(run.world_size, p.world_size);
    ++backends[std::string(name_of(p.backend))];
  }
  for (auto& [b, n] : backends)
    if (run.backend.empty() || n > backends[run.backend]) run.backend = b;
}

// What one pass over the collectives gathers beside the run's op summary.
struct CollectivePass {
  std::vector<Call> calls;
  std::map<int, std::vector<Interval>> device_spans;  // for the kernel overlap
  int64_t origin = INT64_MAX;                         // the first collective's host start
  ShapeTable shapes;                                  // the calls' shapes, for find_mismatches
};

// The collectives from id `from` on, read on a thread of its own while the
// caller reads those before: SQLite's per-row work, most of the read, on two
// cores.
std::future<std::vector<CollectiveRecord>> collectives_beside(const store::RunReader& reader,
                                                              int64_t from) {
  return std::async(std::launch::async, [own = reader.one_pass_beside(), from] {
    return own->collectives("id >= " + std::to_string(from));
  });
}

// The id that splits the table in two halves, or none for fewer rows than
// `split_rows`.
std::optional<int64_t> middle_id(store::RunReader& reader, int64_t rows, int64_t split_rows) {
  if (rows < split_rows) return std::nullopt;
  auto ids = reader.rowid_range("collectives");  // id is the rowid
  if (!ids) return std::nullopt;
  return ids->first + (ids->second - ids->first) / 2 + 1;
}

// `already`: the collectives read already (rank files read together), else
// they are read here, and kept in `keep` where it is set.
CollectivePass read_collectives(RunAnalysis& run, store::RunReader& reader, int64_t split_rows,
                                const CollectiveRuns* already, CollectiveRuns* keep) {
  CollectivePass pass;
  OpSummarizer ops;
  Timing best = Timing::none;
  const auto rows = uint64_t(reader.count("collectives"));
  // Sized once: grown by doubling, a million calls would briefly be held twice.
  pass.calls.reserve(rows);
  core::progress::Counter read("analysis: collectives", rows);
  std::vector<CollectiveRecord>* kept = nullptr;  // what `take` keeps records in
  auto take = [&](const CollectiveRecord& c) {
    read.tick();
    ops.add(c);
    if (device_span_without_kernels(c)) pass.device_spans[c.rank].push_back({c.start_ns, c.end_ns});
    pass.calls.push_back(call_of(c));
    pass.calls.back().shape = pass.shapes.id(c.op, c.dtype, c.count);
    best = std::max(best, c.timing);
    pass.origin = std::min(pass.origin, c.host_start_ns);
    if (kept) kept->push_back(c);
  };
  auto keep_from_here = [&](size_t most) {
    if (!keep) return;
    kept = &keep->emplace_back();
    kept->reserve(most);
  };
  if (keep) keep->clear();
  if (already) {
    for (const auto& run : *already)
      for (const auto& c : run) take(c);
  } else if (auto middle = middle_id(reader, int64_t(rows), split_rows)) {
    auto later = collectives_beside(reader, *middle);
    keep_from_here(rows / 2 + 1);
    reader.for_each_collective(take, "id < " + std::to_string(*middle));
    kept = nullptr;  // the later half is kept as its thread read it
    auto rest = later.get();
    for (const auto& c : rest) take(c);
    if (keep) keep->push_back(std::move(rest));
  } else {
    keep_from_here(rows);
    reader.for_each_collective(take);
  }
  run.ops = ops.finish();
  run.timing = std::string(name_of(best));
  return pass;
}

// One view per rank that left a process row, over its slice of `calls`.
// `compute`: every rank's compute kernels.
std::vector<RankView> rank_views(store::RunReader& reader, const std::vector<ProcessRecord>& procs,
                                 std::map<int, std::span<Call>>& by_rank,
                                 const std::map<int, RankAccount>& accounts,
                                 const std::map<int, FsdpRankAccount>& fsdp,
                                 std::map<int, std::vector<Interval>> compute) {
  std::vector<RankView> views;
  std::set<int> ranks;
  for (const auto& p : procs) ranks.insert(p.rank);
  for (int r : ranks) {
    core::progress::update("analysis: ranks", views.size(), ranks.size());
    auto acc = accounts.find(r);
    auto f = fsdp.find(r);
    views.push_back(make_view(reader, by_rank[r], r, std::move(compute[r]),
                              acc == accounts.end() ? nullptr : &acc->second,
                              f != fsdp.end() && !f->second.empty()));
  }
  return views;
}

}  // namespace

const char* name_of(CollectiveRole role) {
  switch (role) {
    case CollectiveRole::ddp_bucket:
      return "ddp_bucket";
    case CollectiveRole::ddp_control:
      return "ddp_control";
    case CollectiveRole::user:
      return "user";
    case CollectiveRole::unknown:
      return "unknown";
    case CollectiveRole::fsdp_all_gather:
      return "fsdp_all_gather";
    case CollectiveRole::fsdp_reduce_scatter:
      return "fsdp_reduce_scatter";
    case CollectiveRole::fsdp_all_reduce:
      return "fsdp_all_reduce";
  }
  return "unknown";
}

// hook_accounts.cpp: the start-up hook's accounts of FSDP and DDP, per rank.
std::map<int, FsdpRankAccount> classify_fsdp(store::RunReader& reader,
                                             const std::map<int, std::span<Call>>& by_rank);
std::map<int, RankAccount> classify(store::RunReader& reader, std::vector<Call>& calls);
void fsdp_summary(RunAnalysis& run, std::vector<RankView>& views,
                  std::map<int, std::span<Call>>& by_rank,
                  const std::map<int, FsdpRankAccount>& accounts);
void rank_summary(RunAnalysis& run, const std::vector<Call>& calls,
                  const std::vector<ProcessRecord>& procs, const std::vector<RankView>& views);
void timeline_sample(RunAnalysis& run, const std::vector<RankView>& views, int iterations,
                     int64_t origin);

RunAnalysis analyze_run(store::RunReader& reader, const AnalysisOptions& options) {
  RunAnalysis run;
  auto procs = reader.processes();
  describe_run(run, reader, procs);
  std::optional<FilesRead> files;
  std::future<KernelIntervals> kernels_read;
  if (reader.parts().size() > 1) {
    files = read_files(reader);
    std::promise<KernelIntervals> read;
    read.set_value(std::move(files->kernels));
    kernels_read = read.get_future();
  } else {
    kernels_read = kernel_intervals_beside(reader);
  }
  auto [calls, device_spans, origin, shapes] =
      read_collectives(run, reader, options.split_read_rows, files ? &files->collectives : nullptr,
                       options.keep_collectives);
  if (files && options.keep_collectives) *options.keep_collectives = std::move(files->collectives);
  files.reset();
  auto by_rank = calls_by_rank(calls);
  auto fsdp = classify_fsdp(reader, by_rank);
  auto accounts = classify(reader, calls);
  core::progress::update("analysis: kernels", 0, 0);
  auto kernels = kernels_read.get();
  auto views = rank_views(reader, procs, by_rank, accounts, fsdp, std::move(kernels.compute));
  auto overlap = kernel_overlap_by_rank(views, std::move(device_spans), std::move(kernels.comm));
  bool from_kernels =
      std::any_of(views.begin(), views.end(), [](auto& v) { return v.compute_from_kernels; });
  run.compute_source = from_kernels ? "kernels" : "backward-window";

  fsdp_summary(run, views, by_rank, fsdp);
  iteration_summary(run, views);
  NcclChoices choices = nccl_choices(reader);
  run.buckets = bucket_stats(views, choices);
  size_classes(calls, run);
  run.nccl_choices = nccl_choice_stats(calls, choices);
  rank_summary(run, calls, procs, views);
  rank_endings(run, reader, procs);
  rank_iterations(run, views);
  for (auto& r : run.ranks)
    if (auto o = overlap.find(r.rank); o != overlap.end()) r.kernel_overlap_pct = o->second;
  run.ddp = ddp_instances(accounts, views);
  run.roles = role_stats(calls);
  timeline_sample(run, views, options.timeline_iterations, origin == INT64_MAX ? 0 : origin);
  // Over the whole run only: a part (--ranks, --since) leaves out the very
  // ranks and calls that tell a hang from the edge of the part.
  if (reader.filter().all()) {
    run.hangs = find_hangs(reader, calls, run.ranks, run.world_size, origin);
    run.mismatches = find_mismatches(calls, shapes, reader.rows<InflightRecord>());
  }
  run.recommendations = recommend(run);
  if (options.keep_labels) *options.keep_labels = CollectiveLabels(calls, fsdp);
  core::progress::finish();
  return run;
}

}  // namespace ddpscope::analysis
