#include "profiler/analysis/ddp_account.h"

#include <sstream>

#include "profiler/analysis/facts.h"

namespace ddpscope::analysis {
namespace {

DdpFacts ddp_facts_of(int instance, const Facts& kv) {
  DdpFacts f;
  auto& s = f.summary;
  s.instance = instance;
  s.module = fact_text(kv, "module");
  s.bucket_cap_bytes = fact_number(kv, "bucket_cap_bytes");
  s.first_bucket_bytes = fact_number(kv, "first_bucket_bytes");
  s.explicit_cap_sets_first_bucket = fact_flag(kv, "explicit_cap_sets_first_bucket");
  s.find_unused_parameters = fact_flag(kv, "find_unused_parameters");
  s.static_graph = fact_flag(kv, "static_graph");
  s.gradient_as_bucket_view = fact_flag(kv, "gradient_as_bucket_view");
  s.comm_hook = fact_text(kv, "comm_hook");
  s.parameters = int(fact_number(kv, "num_parameter_tensors"));
  for (uint64_t b : parse_sizes(fact_text(kv, "param_bytes"))) s.parameter_bytes += b;
  f.initial_buckets = parse_sizes(fact_text(kv, "bucket_sizes"));
  f.rebuilt_buckets = parse_sizes(fact_text(kv, "rebuilt_bucket_sizes"));
  s.bucket_bytes = f.rebuilt_buckets.empty() ? f.initial_buckets : f.rebuilt_buckets;
  f.pg_key = fact_signed(kv, "pg_key");
  f.pg_size = int(fact_number(kv, "pg_size"));
  return f;
}

}  // namespace

std::vector<uint64_t> parse_sizes(const std::string& s) {
  std::vector<uint64_t> out;
  std::string t = s;
  for (char& c : t)
    if (c == ',') c = ' ';
  std::istringstream in(t);
  std::string word;
  while (in >> word) {
    char* end = nullptr;
    uint64_t v = std::strtoull(word.c_str(), &end, 10);
    if (end && *end == '\0') out.push_back(v);
  }
  return out;
}

std::map<int, DdpFacts> ddp_facts(const std::vector<DdpInfoRecord>& info) {
  // Rows come in recording order: a later value for a key supersedes.
  std::map<int, Facts> kv;
  for (const auto& r : info) kv[r.instance][r.key] = r.value;
  std::map<int, DdpFacts> out;
  for (const auto& [instance, facts] : kv) out[instance] = ddp_facts_of(instance, facts);
  return out;
}

}  // namespace ddpscope::analysis
