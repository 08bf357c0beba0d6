// Topology specs: the shorthand and the JSON file give the same Topology, the
// canonical name reads back as the same topology, and every malformed spec is
// one line naming the spec or file and what is wrong.
#include <catch2/catch.hpp>
#include <fstream>

#include "tests/support/subprocess.h"
#include "tuner/topology.h"

using namespace ddpscope;
using namespace ddpscope::tuner;

namespace {

std::string write_file(const std::string& text) {
  static const std::string dir = testing::temp_dir("topology");
  static int n = 0;
  const std::string path = dir + "/t" + std::to_string(n++) + ".json";
  std::ofstream(path) << text;
  return path;
}

std::string error_for(const std::string& spec) {
  try {
    parse_topology(spec);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("shorthand: shapes and defaults") {
  Topology one = parse_topology("4");
  CHECK(one.nodes == 1);
  CHECK(one.ranks_per_node == 4);
  CHECK(one.inter.bandwidth_gbps == 0);  // not limited
  CHECK(one.intra.latency_us == 0);
  Topology t = parse_topology("2x2");
  CHECK(t.nodes == 2);
  CHECK(t.ranks_per_node == 2);
  CHECK(t.nranks() == 4);
  CHECK(parse_topology("16X8").nranks() == 128);
}

TEST_CASE("shorthand: bandwidths and latencies in every unit") {
  Topology t = parse_topology("2x4:inter=10gbit,intra=100gbit,inter_lat=5us,intra_lat=0.5us");
  CHECK(t.inter.bandwidth_gbps == Approx(10));
  CHECK(t.intra.bandwidth_gbps == Approx(100));
  CHECK(t.inter.latency_us == Approx(5));
  CHECK(t.intra.latency_us == Approx(0.5));
  CHECK(parse_topology("2x2:inter=200mbit").inter.bandwidth_gbps == Approx(0.2));
  CHECK(parse_topology("2x2:inter=1500kbit").inter.bandwidth_gbps == Approx(0.0015));
  CHECK(parse_topology("2x2:inter=1000000000bit").inter.bandwidth_gbps == Approx(1));
  CHECK(parse_topology("2x2:inter=1.6tbit").inter.bandwidth_gbps == Approx(1600));
  CHECK(parse_topology("2x2:inter=1Gbit").inter.bandwidth_gbps == Approx(1));
  CHECK(parse_topology("2x2:inter_lat=2ms").inter.latency_us == Approx(2000));
  CHECK(parse_topology("2x2:inter_lat=0.001s").inter.latency_us == Approx(1000));
  CHECK(parse_topology("2x2:inter_lat=0us").inter.latency_us == 0);
}

TEST_CASE("name: canonical shorthand that parses back to the same topology") {
  CHECK(parse_topology("4").name() == "1x4");
  CHECK(parse_topology("2x2:inter=1gbit").name() == "2x2:inter=1gbit");
  CHECK(parse_topology("2x2:inter=1000mbit").name() == "2x2:inter=1gbit");
  CHECK(parse_topology("2x2:inter=200mbit").name() == "2x2:inter=200mbit");
  CHECK(parse_topology("2x4:inter_lat=5us,intra=100gbit,inter=2.5gbit").name() ==
        "2x4:inter=2.5gbit,intra=100gbit,inter_lat=5us");
  CHECK(parse_topology("2x2:intra_lat=1500us").name() == "2x2:intra_lat=1.5ms");
  for (const char* spec : {"1x1", "8x8:inter=400gbit,intra=900gbit,inter_lat=2us,intra_lat=1us",
                           "2x3:inter=64kbit", "5x1:inter=12bit"}) {
    Topology a = parse_topology(spec);
    Topology b = parse_topology(a.name());
    CHECK(b.name() == a.name());
    CHECK(b.inter.bandwidth_gbps == Approx(a.inter.bandwidth_gbps));
    CHECK(b.intra.latency_us == Approx(a.intra.latency_us));
  }
}

TEST_CASE("shorthand: each malformed spec is one line naming it and the problem") {
  const std::pair<const char*, const char*> cases[] = {
      {"", "topology '': the spec is empty"},
      {"2x", "topology '2x': ranks per node is missing"},
      {"x4", "topology 'x4': nodes is missing"},
      {"0x4", "topology '0x4': nodes must be at least 1"},
      {"2x0", "topology '2x0': ranks per node must be at least 1"},
      {"2x2x2", "topology '2x2x2': ranks per node '2x2' is not a whole number"},
      {"-2x2", "topology '-2x2': nodes '-2' is not a whole number"},
      {"99999999x2", "topology '99999999x2': nodes '99999999' is too large"},
      {"two", "topology 'two': ranks 'two' is not a whole number"},
      {"2x2:", "topology '2x2:': nothing after ':'"},
      {"2x2:inter", "topology '2x2:inter': 'inter' is not KEY=VALUE"},
      {"2x2:inter=", "topology '2x2:inter=': inter has no value"},
      {"2x2:inter=fast", "topology '2x2:inter=fast': inter 'fast' does not start with a number"},
      {"2x2:inter=1", "topology '2x2:inter=1': inter '1' has no unit (bit, kbit, mbit, gbit"},
      {"2x2:inter=1gbyte", "topology '2x2:inter=1gbyte': inter '1gbyte': unknown unit 'gbyte'"},
      {"2x2:inter=0gbit", "topology '2x2:inter=0gbit': inter must be a positive bandwidth"},
      {"2x2:inter_lat=5", "inter_lat '5' has no unit (us, ms, s)"},
      {"2x2:inter_lat=5ns", "inter_lat '5ns': unknown unit 'ns' (us, ms, s)"},
      {"2x2:inter_lat=-5us", "inter_lat '-5us' does not start with a number"},
      {"2x2:bw=1gbit", "topology '2x2:bw=1gbit': unknown field 'bw' (inter, intra, inter_lat"},
      {"2x2:inter=1gbit,inter=2gbit", "inter is given twice"},
      {"2x2:inter=1gbit,", "an empty field after the last comma"},
      {"2x2:inter=1gbit,,intra=2gbit", "an empty field between commas"},
      {"2x2:inter=1e999gbit", "inter '1e999gbit' is out of range"},
      {"2x2:inter=0x10gbit", "inter '0x10gbit' is not a decimal number with a unit"},
  };
  for (const auto& [spec, expected] : cases) {
    const std::string e = error_for(spec);
    INFO(spec);
    CHECK_THAT(e, Catch::Contains(expected));
    CHECK(e.find('\n') == std::string::npos);
  }
}

TEST_CASE("file: the same fields as the shorthand, as JSON") {
  const std::string path = write_file(
      R"({"description": "two 4-GPU nodes", "nodes": 2, "ranks_per_node": 4,
          "inter": "10gbit", "intra": "100gbit", "inter_lat": "5us", "intra_lat": "1us"})");
  Topology t = parse_topology(path);
  CHECK(t.nodes == 2);
  CHECK(t.ranks_per_node == 4);
  CHECK(t.name() == "2x4:inter=10gbit,intra=100gbit,inter_lat=5us,intra_lat=1us");
  Topology plain = parse_topology(write_file(R"({"nodes": 1, "ranks_per_node": 3})"));
  CHECK(plain.name() == "1x3");
}

TEST_CASE("file: each malformed file is one line naming it and the problem") {
  const std::pair<std::string, const char*> cases[] = {
      {R"({"nodes": 2)", "invalid JSON at byte"},
      {R"([2, 2])", "the top level must be a JSON object"},
      {R"({"ranks_per_node": 2})", "nodes is missing"},
      {R"({"nodes": 2})", "ranks_per_node is missing"},
      {R"({"nodes": 2.0, "ranks_per_node": 2})", "nodes must be a whole number from 1"},
      {R"({"nodes": 0, "ranks_per_node": 2})", "nodes must be a whole number from 1"},
      {R"({"nodes": 2, "ranks_per_node": "2"})", "ranks_per_node must be a whole number"},
      {R"({"nodes": 2, "ranks_per_node": 2, "inter": 10})", "inter must be a string with a unit"},
      {R"({"nodes": 2, "ranks_per_node": 2, "inter": "10 gbit"})", "unknown unit ' gbit'"},
      {R"({"nodes": 2, "ranks_per_node": 2, "latency": "5us"})", "unknown field 'latency'"},
  };
  for (const auto& [text, expected] : cases) {
    const std::string path = write_file(text);
    const std::string e = error_for(path);
    INFO(text);
    CHECK_THAT(e, Catch::StartsWith(path + ": "));
    CHECK_THAT(e, Catch::Contains(expected));
    CHECK(e.find('\n') == std::string::npos);
  }
  CHECK_THAT(
      error_for("/nonexistent/t.json"),
      Catch::Equals("/nonexistent/t.json: cannot open the file (No such file or directory)"));
  CHECK_THAT(error_for("missing.json"), Catch::StartsWith("missing.json: cannot open the file"));
}
