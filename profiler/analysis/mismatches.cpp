#include "profiler/analysis/mismatches.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace ddpscope::analysis {
namespace {

// Counts that may differ (all-gather's v-variants) do not split a shape.
bool same_shape(const Mismatch::Shape& a, const Mismatch::Shape& b) {
  return a.op == b.op && a.dtype == b.dtype && (a.count == b.count || !op_is(b.op, kSameCount));
}

// One rank's call of one collective instance, as the finder sees it.
struct Entry {
  uint64_t comm_id, seq;
  int32_t rank;
  uint32_t shape;
};

using Instance = std::pair<uint64_t, uint64_t>;  // communicator, sequence number

struct InstanceHash {
  size_t operator()(const Instance& k) const { return k.first * 0x9E3779B97F4A7C15ull ^ k.second; }
};

template <typename Fn>
void for_each_entry(const std::vector<Call>& calls, ShapeTable& shapes,
                    const std::vector<InflightRecord>& inflight, Fn&& fn) {
  for (const Call& c : calls)
    if (!op_is(c.op, kPointToPoint)) fn(Entry{c.comm_id, c.seq, c.rank, c.shape});
  for (const InflightRecord& r : inflight)
    if (!op_is(r.op, kPointToPoint))
      fn(Entry{r.comm_id, r.seq, r.rank, shapes.id(r.op, r.dtype, r.count)});
}

// One instance's calls, (shape, rank) each, as a mismatch: the exact shapes
// in name order, those the same (same_shape) merged into the first.
Mismatch mismatch_of(Instance at, std::vector<std::pair<uint32_t, int32_t>> seen,
                     const ShapeTable& shapes) {
  auto order = [&](uint32_t a, uint32_t b) {
    const auto &x = shapes[a], &y = shapes[b];
    return std::make_tuple(name_of(x.op), name_of(x.dtype), x.count) <
           std::make_tuple(name_of(y.op), name_of(y.dtype), y.count);
  };
  std::sort(seen.begin(), seen.end(), [&](const auto& a, const auto& b) {
    if (a.first != b.first) return order(a.first, b.first);
    return a.second < b.second;
  });
  seen.erase(std::unique(seen.begin(), seen.end()), seen.end());
  Mismatch m{at.first, at.second, {}};
  for (const auto& call : seen) {
    const Mismatch::Shape& shape = shapes[call.first];
    const int32_t rank = call.second;
    auto same = std::find_if(m.shapes.begin(), m.shapes.end(),
                             [&](const Mismatch::Shape& o) { return same_shape(o, shape); });
    if (same == m.shapes.end()) {
      m.shapes.push_back(shape);
      same = m.shapes.end() - 1;
    }
    same->ranks.push_back(rank);
  }
  for (auto& s : m.shapes) std::sort(s.ranks.begin(), s.ranks.end());
  return m;
}

}  // namespace

size_t ShapeTable::KeyHash::operator()(const Key& k) const {
  return k.count * 0x9E3779B97F4A7C15ull ^ (size_t(k.op) << 8 | size_t(k.dtype));
}

uint32_t ShapeTable::id(Op op, Dtype dtype, uint64_t count) {
  auto [it, added] = ids_.try_emplace(Key{op, dtype, count}, uint32_t(shapes_.size()));
  if (added) shapes_.push_back({{}, op, dtype, count});
  return it->second;
}

std::vector<Mismatch> find_mismatches(const std::vector<Call>& calls, ShapeTable& shapes,
                                      const std::vector<InflightRecord>& inflight) {
  // First: each instance's first shape, or none where another shape came
  // too (same_shape is an equivalence, so comparing with the first suffices).
  constexpr uint32_t kMixed = UINT32_MAX;
  std::unordered_map<Instance, uint32_t, InstanceHash> first;
  for_each_entry(calls, shapes, inflight, [&](const Entry& e) {
    auto [it, added] = first.try_emplace({e.comm_id, e.seq}, e.shape);
    if (!added && it->second != kMixed && it->second != e.shape &&
        !same_shape(shapes[it->second], shapes[e.shape]))
      it->second = kMixed;
  });
  // Then the mixed instances' calls, rarely any.
  std::map<Instance, std::vector<std::pair<uint32_t, int32_t>>> mixed;
  for (const auto& [at, shape] : first)
    if (shape == kMixed) mixed[at];
  if (mixed.empty()) return {};
  for_each_entry(calls, shapes, inflight, [&](const Entry& e) {
    auto it = mixed.find({e.comm_id, e.seq});
    if (it != mixed.end()) it->second.push_back({e.shape, e.rank});
  });
  std::vector<Mismatch> out;
  for (auto& [at, seen] : mixed) out.push_back(mismatch_of(at, std::move(seen), shapes));
  return out;
}

}  // namespace ddpscope::analysis
