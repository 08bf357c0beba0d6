#include "profiler/analysis/hangs.h"

#include <signal.h>
#include <string.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "profiler/analysis/ddp_account.h"
#include "profiler/analysis/fsdp_hang.h"
#include "profiler/analysis/python_stacks.h"

namespace ddpscope::analysis {
namespace {

// A rank's completed sequence numbers: sorted, once every call is in
// (a million calls make a million tree nodes in a std::set).
struct Seqs {
  std::vector<uint64_t> sorted;
  bool count(uint64_t s) const { return std::binary_search(sorted.begin(), sorted.end(), s); }
  void insert(uint64_t s) { sorted.insert(std::upper_bound(sorted.begin(), sorted.end(), s), s); }
  void settle() {
    std::sort(sorted.begin(), sorted.end());
    sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  }
};

struct CommView {
  int nranks = 0;
  std::set<int> members;                                       // global ranks
  std::map<int, Seqs> completed;                               // rank -> seqs
  std::map<int, std::map<uint64_t, InflightRecord>> inflight;  // rank -> seq -> row
};

// A collective every other member completed is not where the job stopped:
// its data reached them all, so this rank's kernel has ended or is about to.
// A rank still listing it enqueued has a late CUPTI record: CUPTI hands a
// buffer over only once every record in it is complete, and the kernel the
// job is stuck in shares the buffer (seen on an H100: a 2-rank stall placed
// one iteration early). Counted completed here.
void settle_late_records(CommView& v) {
  if (v.members.size() < 2) return;
  for (auto& [rank, rows] : v.inflight)
    for (auto it = rows.begin(); it != rows.end();) {
      bool others_done = it->second.state == InflightState::enqueued;
      for (int m : v.members) {
        if (m == rank || !others_done) continue;
        auto done = v.completed.find(m);
        others_done = done != v.completed.end() && done->second.count(it->first);
      }
      if (!others_done) {
        ++it;
        continue;
      }
      if (!v.completed[rank].count(it->first)) v.completed[rank].insert(it->first);
      it = rows.erase(it);
    }
}

std::map<uint64_t, CommView> comm_views(store::RunReader& reader, const std::vector<Call>& calls,
                                        int world_size) {
  std::map<uint64_t, CommView> comms;
  for (const auto& c : reader.comms()) {
    auto& v = comms[c.comm_id];
    v.nranks = std::max(v.nranks, c.nranks);
    v.members.insert(c.rank);
  }
  for (const auto& c : calls)
    if (!op_is(c.op, kPointToPoint)) comms[c.comm_id].completed[c.rank].sorted.push_back(c.seq);
  for (const auto& f : reader.rows<InflightRecord>())
    if (!op_is(f.op, kPointToPoint)) comms[f.comm_id].inflight[f.rank][f.seq] = f;
  // A member that left no file is known only by number: for a communicator
  // of the whole world (the default group), every rank is a member.
  for (auto& [_, v] : comms) {
    for (auto& [r, seqs] : v.completed) {
      seqs.settle();
      v.members.insert(r);
    }
    for (const auto& [r, _] : v.inflight) v.members.insert(r);
    if (v.nranks == world_size && int(v.members.size()) < world_size)
      for (int r = 0; r < world_size; ++r) v.members.insert(r);
    settle_late_records(v);
  }
  return comms;
}

// The first sequence number not every member completed, if any.
std::optional<uint64_t> first_unfinished(const CommView& v) {
  std::vector<uint64_t> done;  // each rank's seqs once: a seq as often as ranks completed it
  for (const auto& [_, seqs] : v.completed)
    done.insert(done.end(), seqs.sorted.begin(), seqs.sorted.end());
  std::sort(done.begin(), done.end());
  std::optional<uint64_t> first;
  auto consider = [&](uint64_t s) {
    if (!first || s < *first) first = s;
  };
  for (size_t i = 0, j = 0; i < done.size(); i = j) {
    while (j < done.size() && done[j] == done[i]) ++j;
    if (j - i < v.members.size()) {
      consider(done[i]);
      break;  // ordered: the first one is the lowest
    }
  }
  for (const auto& [_, rows] : v.inflight)
    if (!rows.empty()) consider(rows.begin()->first);
  return first;
}

// The in-flight row as the collective it will be once completed (it has no
// collectives.id yet).
Call call_of(const InflightRecord& f) {
  CollectiveRecord c;
  c.rank = f.rank, c.comm_id = f.comm_id, c.nranks = f.nranks, c.seq = f.seq, c.op = f.op;
  c.bytes = f.bytes;
  c.host_start_ns = c.start_ns = c.end_ns = f.host_start_ns;
  return analysis::call_of(c);
}

// The rank's completed collectives and its earlier in-flight rows (late
// records, settled above), with `asked` last of its (comm_id, seq).
std::vector<Call> rank_calls(store::RunReader& reader, const std::vector<Call>& calls, int rank,
                             const Call& asked) {
  std::vector<Call> mine;
  for (const auto& c : calls)
    if (c.rank == rank) mine.push_back(c);
  for (const auto& earlier : reader.rows<InflightRecord>("rank = " + std::to_string(rank)))
    if (earlier.comm_id == asked.comm_id && earlier.seq < asked.seq)
      mine.push_back(call_of(earlier));
  mine.push_back(asked);
  return mine;
}

// The in-flight collective classified with its rank's completed ones, as if
// it had completed: its DDP bucket and the backward pass (iteration) it is in.
void ddp_bucket_of(store::RunReader& reader, std::vector<Call> mine, const Call& asked, Hang& h) {
  std::string rank = "rank = " + std::to_string(asked.rank);
  auto info = reader.rows<DdpInfoRecord>(rank, "recorded_ns");
  if (info.empty()) return;
  auto regions = reader.rows<DdpRegionRecord>(rank);
  auto by_seq = [](const Call& a, const Call& b) {
    return a.comm_id != b.comm_id ? a.comm_id < b.comm_id : a.seq < b.seq;
  };
  std::stable_sort(mine.begin(), mine.end(), by_seq);
  // Pushed last, the one asked about stays the last of its (comm_id, seq).
  auto at = std::upper_bound(mine.begin(), mine.end(), asked, by_seq) - mine.begin() - 1;
  RankAccount acc = classify_rank(mine, regions, info);
  auto it = mine.begin() + at;
  if (it->role != CollectiveRole::ddp_bucket) return;
  h.bucket = it->bucket;
  std::set<uint32_t> before;  // the instance's backward passes before this one
  for (const auto& c : mine)
    if (c.role == CollectiveRole::ddp_bucket && c.instance == it->instance && c.group < it->group &&
        !c.shadow)
      before.insert(c.group);
  h.iteration = int(before.size());
}

// Its FSDP unit and phase, and the step it is in (fsdp_hang.h).
std::optional<FsdpCallLabel> fsdp_label(store::RunReader& reader, std::vector<Call> mine,
                                        const Call& asked) {
  std::string rank = "rank = " + std::to_string(asked.rank);
  auto info = reader.rows<FsdpInfoRecord>(rank, "recorded_ns");
  if (info.empty()) return std::nullopt;
  return fsdp_call_label(std::move(mine), asked, reader.rows<FsdpRegionRecord>(rank), info);
}

void classify_inflight(store::RunReader& reader, const std::vector<Call>& calls,
                       const InflightRecord& f, Hang& h) {
  const Call asked = call_of(f);
  auto mine = rank_calls(reader, calls, f.rank, asked);
  ddp_bucket_of(reader, mine, asked, h);
  if (h.bucket >= 0) return;
  h.fsdp = fsdp_label(reader, std::move(mine), asked);
  if (h.fsdp) h.iteration = h.fsdp->iteration;
}

MissingRank missing_rank(store::RunReader& reader, int rank, const std::vector<Call>& calls,
                         uint64_t comm_id, const std::map<int, const RankStats*>& stats,
                         const std::map<int, RankExitRecord>& exits) {
  MissingRank m;
  m.rank = rank;
  const Call* last = nullptr;
  for (const auto& c : calls)
    if (c.rank == rank && c.comm_id == comm_id && !op_is(c.op, kPointToPoint) &&
        (!last || c.seq > last->seq))
      last = &c;
  if (last) {
    m.last_seq = last->seq;
    m.last_op = last->op;
    m.last_bytes = last->bytes;
    m.last_bucket = last->role == CollectiveRole::ddp_bucket ? last->bucket : -1;
    if (is_fsdp(last->role)) {
      std::vector<Call> mine;
      for (const auto& c : calls)
        if (c.rank == rank) mine.push_back(c);
      m.last_fsdp = fsdp_label(reader, std::move(mine), *last);
    }
  }
  auto s = stats.find(rank);
  auto e = exits.find(rank);
  if (e != exits.end()) m.exit_code = e->second.exit_code, m.signal = e->second.signal;
  m.ended = how_rank_ended(m.exit_code, m.signal, s != stats.end(),
                           s != stats.end() && s->second->finalized);
  return m;
}

// Each rank's stack dump (the last, if it was asked more than once).
std::map<int, std::string> stack_dumps(store::RunReader& reader) {
  std::map<int, std::string> out;
  for (const auto& s : reader.rows<StackRecord>()) out[s.rank] = s.text;
  return out;
}

void add_stacks(Hang& h, const std::map<int, std::string>& dumps) {
  std::vector<int> ranks = h.waiting_ranks;
  ranks.insert(ranks.end(), h.missing_ranks.begin(), h.missing_ranks.end());
  std::sort(ranks.begin(), ranks.end());
  for (int r : ranks)
    if (auto d = dumps.find(r); d != dumps.end())
      if (auto all = main_thread_frames(d->second, SIZE_MAX); !all.empty()) {
        auto user = std::find_if(all.begin(), all.end(), users_code);
        Hang::Stack s{r, {}, user == all.end() ? "" : *user};
        s.frames.assign(all.begin(), all.begin() + std::min<size_t>(all.size(), 8));
        h.stacks.push_back(std::move(s));
      }
}

}  // namespace

std::string how_rank_ended(int exit_code, int signal, bool has_file, bool finalized) {
  if (signal > 0) {
    const char* abbrev = sigabbrev_np(signal);
    return "killed by signal " + std::to_string(signal) +
           (abbrev ? " (SIG" + std::string(abbrev) + ")" : "");
  }
  if (exit_code >= 0) return "exited with status " + std::to_string(exit_code);
  if (!has_file) return "left no rank file";
  return finalized ? "exited (its file was closed)"
                   : "still running, or killed (its file ends at its last flush)";
}

std::vector<Hang> find_hangs(store::RunReader& reader, const std::vector<Call>& calls,
                             const std::vector<RankStats>& ranks, int world_size,
                             int64_t origin_ns) {
  std::map<int, const RankStats*> stats;
  for (const auto& r : ranks) stats[r.rank] = &r;
  std::map<int, RankExitRecord> exits;
  for (const auto& e : reader.rows<RankExitRecord>()) exits[e.rank] = e;
  std::vector<Hang> out;
  auto dumps = stack_dumps(reader);
  for (const auto& [comm_id, v] : comm_views(reader, calls, world_size)) {
    auto seq = first_unfinished(v);
    if (!seq) continue;
    Hang h;
    h.comm_id = comm_id;
    h.nranks = v.nranks;
    h.seq = *seq;
    const InflightRecord* first = nullptr;
    int64_t since = INT64_MAX;
    for (int r : v.members) {
      auto done = v.completed.find(r);
      auto in = v.inflight.find(r);
      const InflightRecord* f = nullptr;
      if (in != v.inflight.end())
        if (auto it = in->second.find(*seq); it != in->second.end()) f = &it->second;
      if (done != v.completed.end() && done->second.count(*seq)) {
        h.completed_ranks.push_back(r);
      } else if (f) {
        h.waiting_ranks.push_back(r);
        if (!first) first = f;
        since = std::min(since, f->host_start_ns);
        h.waited_s = std::max(h.waited_s, double(f->seen_ns - f->host_start_ns) / 1e9);
      } else {
        h.missing_ranks.push_back(r);
        h.missing.push_back(missing_rank(reader, r, calls, comm_id, stats, exits));
      }
    }
    if (first) {
      h.op = first->op, h.dtype = first->dtype, h.count = first->count, h.bytes = first->bytes;
      h.state = first->state == InflightState::enqueued ? "enqueued" : "running";
      h.waiting_since_s = origin_ns == INT64_MAX ? 0 : double(since - origin_ns) / 1e9;
      classify_inflight(reader, calls, *first, h);
    } else {
      for (const auto& c : calls)  // completed by some: what they ran
        if (c.comm_id == comm_id && c.seq == *seq && !op_is(c.op, kPointToPoint)) {
          h.op = c.op, h.bytes = c.bytes,
          h.bucket = c.role == CollectiveRole::ddp_bucket ? c.bucket : -1;
          break;
        }
    }
    add_stacks(h, dumps);
    out.push_back(std::move(h));
  }
  return out;
}

}  // namespace ddpscope::analysis
