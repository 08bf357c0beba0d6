// Which plugin communicator and collective is which hook one (nccl_join.h).
#include "profiler/store/nccl_join.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <tuple>

namespace ddpscope::store {
namespace {

using PluginKey = std::pair<int64_t, int32_t>;  // (comm_hash, comm_rank)

// A hook communicator of the process, its calls per op in call order.
struct HookComm {
  const CommRecord* comm;
  std::map<Op, std::vector<const CollectiveRecord*>> calls;
};

// NCCL moves the data of its collectives that reduce nothing (Broadcast,
// AllGather) as bytes: its plugin reports them as that many ncclInt8.
bool agrees(const CollectiveRecord& h, const NcclPluginCollectiveRecord& p) {
  Dtype d = dtype_of_nccl_name(p.dtype);
  if (h.count == uint64_t(p.count))
    return d == Dtype::unknown || h.dtype == Dtype::unknown || d == h.dtype;
  bool as_bytes = op_is(h.op, kNcclAsBytes) && (d == Dtype::unknown || dtype_bytes(d) == 1);
  return as_bytes && h.count * dtype_bytes(h.dtype) == uint64_t(p.count);
}

// The hooks' call that a plugin collective is: the one at its position among
// the calls of its function (call_positions). Inside ncclGroupStart/End NCCL
// may launch a group's collectives in another order than they were called,
// so a mismatch there is looked for among the same group's calls.
const CollectiveRecord* counterpart(const HookComm& hc, const NcclPluginCollectiveRecord& p,
                                    const std::map<int64_t, int64_t>& positions,
                                    const std::set<int64_t>& taken) {
  auto op = op_of_nccl_func(p.func);
  auto pos = positions.find(p.coll_key);
  if (!op || pos == positions.end()) return nullptr;
  auto it = hc.calls.find(*op);
  if (it == hc.calls.end() || uint64_t(pos->second) >= it->second.size()) return nullptr;
  const auto& calls = it->second;
  const CollectiveRecord* at = calls[size_t(pos->second)];
  if (agrees(*at, p) && !taken.count(at->id)) return at;
  if (at->group_id == 0) return nullptr;
  for (const CollectiveRecord* c : calls)
    if (c->group_id == at->group_id && agrees(*c, p) && !taken.count(c->id)) return c;
  return nullptr;
}

int agreement(const HookComm& hc, const std::vector<const NcclPluginCollectiveRecord*>& ps,
              const std::map<int64_t, int64_t>& positions) {
  std::set<int64_t> none;
  int n = 0;
  for (const auto* p : ps) n += counterpart(hc, *p, positions, none) != nullptr;
  return n;
}

std::vector<HookComm> hook_comms(const std::vector<CommRecord>& comms,
                                 const std::vector<CollectiveRecord>& collectives) {
  std::vector<HookComm> out;
  std::map<std::pair<uint64_t, int32_t>, size_t> index;
  for (const auto& c : comms) {
    if (c.backend != Backend::nccl && c.backend != Backend::unknown) continue;
    if (c.origin == CommOrigin::nccl_plugin) continue;
    index.emplace(std::pair{c.comm_id, c.comm_rank}, out.size());
    out.push_back({&c, {}});
  }
  std::vector<const CollectiveRecord*> ordered;
  for (const auto& c : collectives) ordered.push_back(&c);
  std::sort(ordered.begin(), ordered.end(),
            [](auto* a, auto* b) { return std::tie(a->seq, a->id) < std::tie(b->seq, b->id); });
  for (const CollectiveRecord* c : ordered)
    if (auto it = index.find({c->comm_id, c->comm_rank}); it != index.end())
      out[it->second].calls[c->op].push_back(c);
  return out;
}

struct Candidate {
  int score;
  int64_t time_gap;
  PluginKey plugin;
  size_t hook;
};

}  // namespace

bool is_copy_engine(const NcclPluginCollectiveRecord& p) { return p.algo == kNcclCopyEngineAlgo; }

// NCCL counts a function's kernel collectives (seqNumber) and not those it
// ran on copy engines, which the hooks see as calls all the same. In start
// order (coll_key), a kernel collective sits past the copy-engine ones of its
// function started before it, and a copy-engine one right after the last
// kernel collective and copy-engine one before it.
std::map<int64_t, int64_t> call_positions(
    const std::vector<const NcclPluginCollectiveRecord*>& comm_collectives) {
  auto by_start = comm_collectives;
  std::sort(by_start.begin(), by_start.end(),
            [](auto* a, auto* b) { return a->coll_key < b->coll_key; });
  struct Count {
    int64_t next_kernel = 0, copies = 0;
  };
  std::map<std::string, Count> per_func;
  std::map<int64_t, int64_t> positions;
  for (const auto* p : by_start) {
    Count& c = per_func[p->func];
    if (is_copy_engine(*p)) {
      positions[p->coll_key] = c.next_kernel + c.copies++;
    } else if (p->seq >= 0) {
      positions[p->coll_key] = p->seq + c.copies;
      c.next_kernel = std::max(c.next_kernel, p->seq + 1);
    }
  }
  return positions;
}

PluginLinks link_plugin_rows(const std::vector<CommRecord>& comms,
                             const std::vector<CollectiveRecord>& collectives,
                             const std::vector<NcclPluginCommRecord>& plugin_comms,
                             const std::vector<NcclPluginCollectiveRecord>& plugin_collectives) {
  std::vector<HookComm> hooks = hook_comms(comms, collectives);
  std::map<PluginKey, std::vector<const NcclPluginCollectiveRecord*>> by_comm;
  for (const auto& p : plugin_collectives)
    if (p.coll_key > 0) by_comm[{p.comm_hash, p.comm_rank}].push_back(&p);

  // Every plausible pairing, best first: most agreeing calls, then the hook
  // communicator created closest to the plugin's init (NCCL calls it from
  // inside the init the hook wraps).
  std::map<PluginKey, std::map<int64_t, int64_t>> positions;
  for (const auto& [key, ps] : by_comm) positions[key] = call_positions(ps);

  std::vector<Candidate> candidates;
  for (const auto& pc : plugin_comms) {
    PluginKey key{pc.comm_hash, pc.comm_rank};
    const auto& ps = by_comm[key];
    for (size_t h = 0; h < hooks.size(); ++h) {
      const CommRecord& hc = *hooks[h].comm;
      if (hc.comm_rank != pc.comm_rank || (hc.nranks && hc.nranks != pc.nranks)) continue;
      int score = agreement(hooks[h], ps, positions[key]);
      if (!ps.empty() && score == 0) continue;  // its calls are not these
      int64_t gap = (hc.created_ns == kNoTime || pc.recorded_ns == kNoTime)
                        ? INT64_MAX
                        : std::llabs(hc.created_ns - pc.recorded_ns);
      candidates.push_back({score, gap, key, h});
    }
  }
  std::sort(candidates.begin(), candidates.end(), [](const Candidate& a, const Candidate& b) {
    return std::tie(b.score, a.time_gap) < std::tie(a.score, b.time_gap);
  });

  PluginLinks links;
  std::set<size_t> used;
  for (const auto& c : candidates) {
    if (links.comms.count(c.plugin) || used.count(c.hook)) continue;
    links.comms[c.plugin] = hooks[c.hook].comm->comm_id;
    used.insert(c.hook);
    std::set<int64_t> taken;
    for (const auto* p : by_comm[c.plugin])
      if (const CollectiveRecord* h = counterpart(hooks[c.hook], *p, positions[c.plugin], taken)) {
        taken.insert(h->id);
        links.collectives[p->coll_key] = h->id;
      }
  }
  return links;
}

std::optional<Op> op_of_nccl_func(std::string_view func) {
  for (size_t i = 0; i < size_t(Op::kCount); ++i)
    if (!func.empty() && func == kOps[i].nccl_func) return Op(i);
  return std::nullopt;
}

Dtype dtype_of_nccl_name(std::string_view name) {
  static const std::pair<std::string_view, Dtype> kTypes[] = {
      {"ncclInt8", Dtype::int8},          {"ncclUint8", Dtype::uint8},
      {"ncclInt32", Dtype::int32},        {"ncclUint32", Dtype::uint32},
      {"ncclInt64", Dtype::int64},        {"ncclUint64", Dtype::uint64},
      {"ncclFloat16", Dtype::float16},    {"ncclFloat32", Dtype::float32},
      {"ncclFloat64", Dtype::float64},    {"ncclBfloat16", Dtype::bfloat16},
      {"ncclFloat8e4m3", Dtype::fp8e4m3}, {"ncclFloat8e5m2", Dtype::fp8e5m2}};
  for (const auto& [n, d] : kTypes)
    if (name == n) return d;
  return Dtype::unknown;  // NCCL 2.28 names ncclUint8 "Unknown"
}

}  // namespace ddpscope::store
