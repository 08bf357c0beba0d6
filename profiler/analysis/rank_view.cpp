#include "profiler/analysis/rank_view.h"

#include <algorithm>
#include <iterator>

#include "profiler/core/parallel.h"
#include "profiler/core/stats.h"
#include "profiler/store/kernel_block_reader.h"

namespace ddpscope::analysis {

namespace {

// The kernels whose rowid is in [lo, hi): a range of the table's B-tree, so
// that readers on several threads each read their own rows once. The kind is
// told apart here, by its text's length first: SQLite comparing the text
// (`kind IN (...)`, `kind = ...`) took 40 % of this read's CPU on 5M kernels.
KernelIntervals kernels_in_table(store::RunReader& reader, int64_t lo, int64_t hi) {
  KernelIntervals out;
  const std::string_view comm = name_of(KernelKind::comm), compute = name_of(KernelKind::compute);
  store::Statement st(reader.connection(),
                      "SELECT rank, start_ns, end_ns, kind FROM kernels WHERE rowid >= ? AND "
                      "rowid < ? AND start_ns IS NOT NULL AND end_ns IS NOT NULL AND " +
                          reader.where("kernels"));
  st.bind(1, lo);
  st.bind(2, hi);
  while (st.step()) {
    const std::string_view kind = st.text_view(3);
    auto* into = kind == comm ? &out.comm : kind == compute ? &out.compute : nullptr;
    if (into) (*into)[int(st.int64(0))].push_back({st.int64(1), st.int64(2)});
  }
  return out;
}

// The same from the blocks whose rowid is in [lo, hi) (store/kernel_blocks.h).
// A block is one rank's: its two lists are looked up once, at their first use.
KernelIntervals kernels_in_blocks(store::RunReader& reader, int64_t lo, int64_t hi) {
  KernelIntervals out;
  store::for_each_kernel_block(reader, lo, hi, [&](const store::KernelBlock& b) {
    std::vector<Interval>*comm = nullptr, *compute = nullptr;
    auto list = [&](std::map<int, std::vector<Interval>>& by_rank, std::vector<Interval>*& own) {
      if (!own) own = &by_rank[b.rank];
      return own;
    };
    for (const auto& k : b.rows) {
      if (k.end_ns == kNoTime) continue;
      if (k.kind == KernelKind::comm) list(out.comm, comm)->push_back({k.start_ns, k.end_ns});
      if (k.kind == KernelKind::compute)
        list(out.compute, compute)->push_back({k.start_ns, k.end_ns});
    }
  });
  return out;
}

// `packed`: from the file's blocks, which hold every row of its table
// (store::kernel_blocks_whole), else from the table.
KernelIntervals kernels_in_rows(store::RunReader& reader, bool packed, int64_t lo, int64_t hi) {
  return packed ? kernels_in_blocks(reader, lo, hi) : kernels_in_table(reader, lo, hi);
}

// The compute kernels unioned as soon as they are read, on the reader's own
// thread: the union is what the analysis uses, and a fraction of the rows.
KernelIntervals unioned(KernelIntervals k) {
  for (auto& [rank, v] : k.compute) v = union_of(std::move(v));
  return k;
}

// Appends `more` (later rows) to `out`, rank by rank.
void append(KernelIntervals& out, KernelIntervals more) {
  auto join = [](auto& to, auto& from) {
    for (auto& [rank, v] : from) {
      auto& into = to[rank];
      if (into.empty())
        into = std::move(v);
      else
        into.insert(into.end(), v.begin(), v.end());
      v = {};
    }
  };
  join(out.compute, more.compute);
  join(out.comm, more.comm);
}

// Readers of the kernels: one per core, at most four (measured on two cores
// only, where two took the analysis from 3.5 s to 2.7 s at 5M kernels).
int kernel_readers() { return core::worker_threads(4); }

}  // namespace

KernelIntervals kernel_intervals(store::RunReader& reader) {
  KernelIntervals out;
  for (store::RunReader* file : reader.parts())
    append(out, kernels_in_rows(*file, store::kernel_blocks_whole(*file), INT64_MIN, INT64_MAX));
  return out;
}

namespace {

// One file: its table split by rowid among the readers.
KernelIntervals kernels_by_rowid(store::RunReader& own) {
  // Named copies, not a structured binding: clang 14 (the fuzz build) can't
  // capture a binding in the lambda below.
  const bool packed = store::kernel_blocks_whole(own);
  const auto range = own.rowid_range(packed ? "kernel_blocks" : "kernels")
                         .value_or(std::pair<int64_t, int64_t>{0, 0});
  const int64_t lo = range.first, hi = range.second + 1;
  const int parts = kernel_readers();
  auto edge = [&](int k) { return k == parts ? INT64_MAX : lo + (hi - lo) * k / parts; };
  std::vector<std::future<KernelIntervals>> rest;
  for (int k = 1; k < parts; ++k)
    rest.push_back(std::async(std::launch::async, [&, k, reader = own.one_pass_beside()] {
      return unioned(kernels_in_rows(*reader, packed, edge(k), edge(k + 1)));
    }));
  KernelIntervals out = unioned(kernels_in_rows(own, packed, INT64_MIN, edge(1)));
  for (auto& part : rest) append(out, part.get());
  return parts > 1 ? unioned(std::move(out)) : out;
}

}  // namespace

FilesRead read_files(store::RunReader& reader) {
  auto files = reader.parts();
  struct Run {
    std::vector<CollectiveRecord> collectives;
    KernelIntervals kernels;
  };
  std::vector<Run> runs(static_cast<size_t>(kernel_readers()));
  core::parallel_runs(files.size(), int(runs.size()), [&](size_t k, size_t first, size_t last) {
    // Counted first, so that the run's vector is sized once: grown by
    // doubling it would copy what it holds at each step (a count is a pass
    // over the table's pages, not a decoding of its rows).
    size_t rows = 0;
    for (size_t i = first; i < last; ++i) rows += size_t(files[i]->count("collectives"));
    runs[k].collectives.reserve(rows);
    for (size_t i = first; i < last; ++i) {
      files[i]->for_each_collective(
          [&](const CollectiveRecord& c) { runs[k].collectives.push_back(c); });
      append(runs[k].kernels,
             unioned(kernels_in_rows(*files[i], store::kernel_blocks_whole(*files[i]), INT64_MIN,
                                     INT64_MAX)));
    }
  });
  FilesRead out;
  for (auto& run : runs) {
    out.collectives.push_back(std::move(run.collectives));
    append(out.kernels, std::move(run.kernels));
  }
  return out;
}

std::future<KernelIntervals> kernel_intervals_beside(const store::RunReader& reader) {
  return std::async(std::launch::async,
                    [own = reader.one_pass_beside()] { return kernels_by_rowid(*own); });
}

namespace {

Interval interval_of(const Call& c) { return {c.start, c.end}; }

}  // namespace

std::vector<Interval> backward_windows(const RankView& v) {
  std::vector<Interval> out;
  for (const auto& it : v.split.iterations) {
    int64_t first = INT64_MAX, last = INT64_MIN;
    for (size_t i = it.first; i < it.first + it.count; ++i) {
      first = std::min(first, v.ddp[i].start);
      last = std::max(last, v.ddp[i].start);
    }
    out.push_back({first, last});
  }
  return union_of(out);
}

std::vector<IterationStats> iteration_stats(const RankView& v) {
  if (v.split.iterations.empty()) return v.fsdp_steps;
  std::vector<IterationStats> out;
  const auto& its = v.split.iterations;
  for (size_t k = 0; k < its.size(); ++k) {
    IterationStats s;
    s.rank = v.rank;
    s.index = int(k);
    s.warmup = its[k].warmup;
    s.shadow = its[k].shadow;
    s.buckets = int(its[k].count);
    std::vector<Interval> comm;
    int64_t first = INT64_MAX, last_end = INT64_MIN, launch = INT64_MAX;
    for (size_t i = its[k].first; i < its[k].first + its[k].count; ++i) {
      comm.push_back(interval_of(v.ddp[i]));
      first = std::min(first, v.ddp[i].start);
      last_end = std::max(last_end, v.ddp[i].end);
      if (v.ddp[i].host_start != kNoTime) launch = std::min(launch, v.ddp[i].host_start);
    }
    s.start_ns = first;
    s.launch_ns = launch == INT64_MAX ? first : launch;
    s.end_ns = last_end;
    s.comm_end_ns = last_end;
    if (k + 1 < its.size()) {
      s.end_ns = v.ddp[its[k + 1].first].start;
      s.iter_ms = double(s.end_ns - s.start_ns) / 1e6;
    }
    s.comm_ms = double(last_end - first) / 1e6;
    s.comm_busy_ms = double(total_length(union_of(comm))) / 1e6;
    s.exposed_ms = double(uncovered_length(comm, v.compute)) / 1e6;
    out.push_back(s);
  }
  return out;
}

namespace {

struct Samples {
  uint64_t bytes = 0;
  int nranks = 0;
  std::vector<double> dur_us, exposed_us, gap_us, overlap;
  std::map<std::string, int> nccl;  // NCCL's choice label -> calls
};

std::string most_common(const std::map<std::string, int>& votes) {
  auto best = std::max_element(votes.begin(), votes.end(),
                               [](auto& a, auto& b) { return a.second < b.second; });
  return best == votes.end() ? "" : best->first;
}

// Steady iterations only: warm-up buckets have another layout, and a join
// shadow step reduces zeros on a rank that is no longer training.
void add_samples(std::map<std::pair<int, int>, Samples>& per, int instance,
                 const std::vector<Call>& calls, const IterationSplit& split,
                 const std::vector<Interval>& compute, const NcclChoices& choices) {
  for (const auto& it : split.iterations) {
    if (it.warmup || it.shadow) continue;
    for (size_t j = 0; j < it.count; ++j) {
      const Call& c = calls[it.first + j];
      Samples& s = per[{instance, c.bucket >= 0 ? c.bucket : int(j)}];
      s.bytes = c.bytes;
      s.nranks = c.nranks;
      double d = double(c.end - c.start);
      double hidden = double(covered(compute, interval_of(c)));
      s.dur_us.push_back(d / 1e3);
      s.exposed_us.push_back((d - hidden) / 1e3);
      s.overlap.push_back(d > 0 ? 100.0 * hidden / d : 0);
      if (j > 0) s.gap_us.push_back(double(c.start - calls[it.first + j - 1].start) / 1e3);
      if (auto ch = choices.find(c.id); ch != choices.end()) ++s.nccl[choice_label(ch->second)];
    }
  }
}

}  // namespace

std::vector<BucketStats> bucket_stats(const std::vector<RankView>& views,
                                      const NcclChoices& choices) {
  std::map<std::pair<int, int>, Samples> samples;  // (instance, bucket index)
  for (const auto& v : views) {
    int primary = v.ddp.empty() || v.ddp[0].instance < 0 ? 0 : v.ddp[0].instance;
    add_samples(samples, primary, v.ddp, v.split, v.compute, choices);
    for (const auto& o : v.others)
      add_samples(samples, o.instance, o.ddp, o.split, v.compute, choices);
  }
  std::vector<BucketStats> out;
  for (auto& [key, per_j] : samples) {
    BucketStats b;
    b.instance = key.first;
    b.index = key.second;
    b.bytes = per_j.bytes;
    b.calls = per_j.dur_us.size();
    b.median_us = stats::quantile(per_j.dur_us, 0.5);
    b.p95_us = stats::quantile(per_j.dur_us, 0.95);
    if (b.median_us > 0) {
      b.algbw_gbps = double(b.bytes) / (b.median_us * 1e3);
      b.busbw_gbps = b.algbw_gbps * busbw_factor(Op::allreduce, per_j.nranks);
    }
    b.overlap_pct = stats::quantile(per_j.overlap, 0.5);
    b.exposed_us = stats::quantile(per_j.exposed_us, 0.5);
    b.launch_gap_us = stats::quantile(per_j.gap_us, 0.5);
    b.nccl_choice = most_common(per_j.nccl);
    out.push_back(b);
  }
  return out;
}

}  // namespace ddpscope::analysis
