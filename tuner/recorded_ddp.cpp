#include "tuner/recorded_ddp.h"

#include <charconv>
#include <map>
#include <numeric>
#include <sstream>

#include "tuner/workload.h"

namespace ddpscope::tuner {
namespace {

using Keys = std::map<std::string, std::string>;

struct Parser {
  const std::string& path;
  int instance;

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(path + ": ddp_info of DDP instance " + std::to_string(instance) + ": " + key +
                     " " + what);
  }

  uint64_t number(const std::string& key, const std::string& text) const {
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size() || text.empty())
      fail(key, "has '" + text + "', not a non-negative integer");
    return v;
  }

  // "a b c"; commas are taken as separators too (DDP's own logging writes "a, b, c").
  std::vector<uint64_t> numbers(const std::string& key, std::string text) const {
    for (char& c : text)
      if (c == ',') c = ' ';
    std::vector<uint64_t> out;
    std::istringstream in(text);
    for (std::string item; in >> item;) out.push_back(number(key, item));
    return out;
  }

  // DDP's rebuilt_per_bucket_param_indices: "11 10 9, 8 7, ...".
  std::vector<std::vector<size_t>> buckets(const std::string& key, const std::string& text) const {
    std::vector<std::vector<size_t>> out;
    std::istringstream in(text);
    for (std::string bucket; std::getline(in, bucket, ',');) {
      std::vector<size_t> params;
      for (uint64_t i : numbers(key, bucket)) params.push_back(size_t(i));
      if (params.empty()) fail(key, "has an empty bucket");
      out.push_back(std::move(params));
    }
    return out;
  }

  std::vector<std::string> words(const std::string& text) const {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string item; in >> item;) out.push_back(item);
    return out;
  }
};

std::string value(const Keys& keys, const std::string& key) {
  auto it = keys.find(key);
  return it == keys.end() ? "" : it->second;
}

// The rebuilt layout must name every parameter exactly once: it is the
// gradient-ready order the tuner replays.
void check_rebuilt(const Parser& p, const RecordedDdp& d) {
  std::vector<int> seen(d.param_bytes.size(), 0);
  for (const auto& bucket : d.rebuilt_buckets)
    for (size_t i : bucket) {
      if (i >= seen.size() || seen[i]++)
        p.fail("rebuilt_per_bucket_param_indices",
               "is not a permutation of the " + std::to_string(seen.size()) + " parameters");
    }
  for (int s : seen)
    if (!s)
      p.fail("rebuilt_per_bucket_param_indices",
             "leaves out parameters of the " + std::to_string(seen.size()));
}

// Parses one instance's keys; nullopt (with *why) where its parameters are missing.
std::optional<RecordedDdp> parse(const std::string& path, int rank, int instance, const Keys& k,
                                 std::string* why) {
  const Parser p{path, instance};
  RecordedDdp d;
  d.rank = rank;
  d.instance = instance;
  d.torch_version = value(k, "torch_version");
  d.param_bytes = p.numbers("param_bytes", value(k, "param_bytes"));
  d.param_dtypes = p.words(value(k, "param_dtypes"));
  if (d.param_bytes.empty()) {
    *why = "DDP instance " + std::to_string(instance) + " has no param_bytes in ddp_info";
    return std::nullopt;
  }
  if (d.param_dtypes.size() != d.param_bytes.size())
    p.fail("param_dtypes", "names " + std::to_string(d.param_dtypes.size()) + " dtypes for " +
                               std::to_string(d.param_bytes.size()) + " parameters");
  d.bucket_cap_bytes = p.number("bucket_cap_bytes", value(k, "bucket_cap_bytes"));
  d.first_bucket_bytes = p.number("first_bucket_bytes", value(k, "first_bucket_bytes"));
  d.explicit_cap_sets_first_bucket = value(k, "explicit_cap_sets_first_bucket") == "1";
  d.find_unused_parameters = value(k, "find_unused_parameters") == "1";
  d.static_graph = value(k, "static_graph") == "1";
  d.bucket_sizes = p.numbers("bucket_sizes", value(k, "bucket_sizes"));
  d.rebuilt_buckets =
      p.buckets("rebuilt_per_bucket_param_indices", value(k, "rebuilt_per_bucket_param_indices"));
  d.rebuilt_bucket_sizes = p.numbers("rebuilt_bucket_sizes", value(k, "rebuilt_bucket_sizes"));
  if (!d.rebuilt_buckets.empty()) check_rebuilt(p, d);
  return d;
}

}  // namespace

uint64_t RecordedDdp::parameter_bytes() const {
  return std::accumulate(param_bytes.begin(), param_bytes.end(), uint64_t(0));
}

std::optional<RecordedDdp> recorded_ddp(store::RunReader& reader, const std::string& path,
                                        std::string* why) {
  // Rows in the order they were written, so a later value of a key wins.
  const auto rows =
      reader.rows<DdpInfoRecord>("rank = (SELECT MIN(rank) FROM ddp_info)", "recorded_ns, rowid");
  if (rows.empty()) {
    *why = "the run holds no DDP account (ddp_info is empty)";
    return std::nullopt;
  }
  std::map<int, Keys> instances;
  for (const auto& r : rows) instances[r.instance][r.key] = r.value;
  std::optional<RecordedDdp> best;
  for (const auto& [instance, keys] : instances) {
    auto d = parse(path, rows.front().rank, instance, keys, why);
    if (d && (!best || d->parameter_bytes() > best->parameter_bytes())) best = std::move(d);
  }
  return best;
}

}  // namespace ddpscope::tuner
