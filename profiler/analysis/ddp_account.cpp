#include "profiler/analysis/ddp_account.h"

#include <cstdlib>
#include <sstream>

namespace ddpscope::analysis {
namespace {

bool flag(const std::map<std::string, std::string>& kv, const char* key) {
  auto it = kv.find(key);
  return it != kv.end() && it->second == "1";
}

uint64_t number(const std::map<std::string, std::string>& kv, const char* key) {
  auto it = kv.find(key);
  return it == kv.end() ? 0 : std::strtoull(it->second.c_str(), nullptr, 10);
}

std::string text(const std::map<std::string, std::string>& kv, const char* key) {
  auto it = kv.find(key);
  return it == kv.end() ? "" : it->second;
}

DdpFacts parse_facts(int instance, const std::map<std::string, std::string>& kv) {
  DdpFacts f;
  auto& s = f.summary;
  s.instance = instance;
  s.module = text(kv, "module");
  s.bucket_cap_bytes = number(kv, "bucket_cap_bytes");
  s.first_bucket_bytes = number(kv, "first_bucket_bytes");
  s.explicit_cap_sets_first_bucket = flag(kv, "explicit_cap_sets_first_bucket");
  s.find_unused_parameters = flag(kv, "find_unused_parameters");
  s.static_graph = flag(kv, "static_graph");
  s.gradient_as_bucket_view = flag(kv, "gradient_as_bucket_view");
  s.comm_hook = text(kv, "comm_hook");
  s.parameters = int(number(kv, "num_parameter_tensors"));
  for (uint64_t b : parse_sizes(text(kv, "param_bytes"))) s.parameter_bytes += b;
  f.initial_buckets = parse_sizes(text(kv, "bucket_sizes"));
  f.rebuilt_buckets = parse_sizes(text(kv, "rebuilt_bucket_sizes"));
  s.bucket_bytes = f.rebuilt_buckets.empty() ? f.initial_buckets : f.rebuilt_buckets;
  f.pg_key = int64_t(std::strtoll(text(kv, "pg_key").c_str(), nullptr, 10));
  f.pg_size = int(number(kv, "pg_size"));
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
  std::map<int, std::map<std::string, std::string>> kv;
  for (const auto& r : info) kv[r.instance][r.key] = r.value;
  std::map<int, DdpFacts> out;
  for (const auto& [instance, facts] : kv) out[instance] = parse_facts(instance, facts);
  return out;
}

}  // namespace ddpscope::analysis
