// Workload JSON: what loads, and the one-line message for each thing that can
// be wrong with a file.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/subprocess.h"
#include "tuner/sweep_spec.h"
#include "tuner/workload.h"

using namespace ddpscope;
using namespace ddpscope::tuner;
using nlohmann::json;

namespace {

std::string write_file(const std::string& text) {
  static const std::string dir = testing::temp_dir("tuner-workload");
  static int n = 0;
  const std::string path = dir + "/w" + std::to_string(n++) + ".json";
  std::ofstream(path) << text;
  return path;
}

json four_params() {
  return json::parse(R"({
    "name": "tiny", "forward_us": 100, "optimizer_us": 20.5,
    "params": [
      {"name": "a.weight", "numel": 1000, "dtype": "float32", "backward_us": 10},
      {"name": "a.bias", "numel": 10, "dtype": "float16", "backward_us": 0},
      {"name": "b.weight", "numel": 5, "dtype": "bfloat16", "backward_us": 2.5},
      {"name": "b.bias", "numel": 3, "dtype": "float64", "backward_us": 1}
    ]})");
}

// The message load_workload_json gives for `j`, with the file's path stripped.
std::string error_for(const json& j) {
  const std::string path = write_file(j.dump());
  try {
    load_workload_json(path);
  } catch (const InputError& e) {
    const std::string what = e.what();
    REQUIRE(what.rfind(path + ": ", 0) == 0);
    REQUIRE(what.find('\n') == std::string::npos);
    return what.substr(path.size() + 2);
  }
  FAIL("no error for " << j.dump());
  return "";
}

}  // namespace

TEST_CASE("a workload file loads with DDP's default ready order") {
  const Workload w = load_workload_json(write_file(four_params().dump()));
  CHECK(w.name == "tiny");
  REQUIRE(w.params.size() == 4);
  CHECK(w.params[0].name == "a.weight");
  CHECK(w.params[0].numel == 1000);
  CHECK(w.params[1].dtype == Dtype::float16);
  CHECK(w.params[2].dtype == Dtype::bfloat16);
  CHECK(w.params[3].dtype == Dtype::float64);
  CHECK(w.params[2].backward_us == 2.5);
  CHECK(w.forward_us == 100);
  CHECK(w.optimizer_us == 20.5);
  CHECK(w.ready_order == std::vector<size_t>{3, 2, 1, 0});
  CHECK(w.total_bytes() == 4000 + 20 + 10 + 24);
  CHECK(w.backward_us() == 13.5);
}

TEST_CASE("an explicit ready order and every sized dtype name load") {
  json j = four_params();
  j["ready_order"] = {1, 0, 3, 2};
  const char* names[] = {"int8", "uint8", "int32", "int64", "uint32", "uint64", "fp8e4m3"};
  const unsigned widths[] = {1, 1, 4, 8, 4, 8, 1};
  for (int k = 0; k < 7; ++k) {
    j["params"][0]["dtype"] = names[k];
    const Workload w = load_workload_json(write_file(j.dump()));
    CHECK(w.ready_order == std::vector<size_t>{1, 0, 3, 2});
    CHECK(w.params[0].bytes() == 1000 * widths[k]);
  }
}

TEST_CASE("file-level problems are one line naming the file") {
  CHECK_THROWS_WITH(load_workload_json("/nonexistent/w.json"),
                    "/nonexistent/w.json: cannot open the file (No such file or directory)");
  const std::string dir = testing::temp_dir("tuner-dir");
  CHECK_THROWS_WITH(load_workload_json(dir), dir + ": is a directory, not a workload file");
  const std::string bad = write_file("{\"name\": \"x\",\n  \"params\": [1,, 2]}");
  CHECK_THROWS_WITH(load_workload_json(bad),
                    Catch::StartsWith(bad + ": invalid JSON at byte 30: parse error at line 2, "
                                            "column 16: syntax error"));
  try {
    load_workload_json(write_file("{\"name\": \"x\n"));  // the tail quotes a newline
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find('\n') == std::string::npos);
  }
  CHECK(error_for(json::array()) == "the top level must be a JSON object");
  const std::string huge =
      write_file("{\"name\": \"x\", \"params\": [{\"name\": \"a\", \"numel\": 1e400}]}");
  CHECK_THROWS_WITH(load_workload_json(huge),
                    huge + ": invalid JSON: number overflow parsing '1e400'");
}

TEST_CASE("sizes that overflow 64 bits are refused, not planned as 0 bytes") {
  const std::string path = write_file(
      "{\"name\": \"x\", \"forward_us\": 1, \"optimizer_us\": 1, \"params\": [{\"name\": "
      "\"a\", \"numel\": 4611686018427387904, \"dtype\": \"float32\", \"backward_us\": 1}]}");
  CHECK_THROWS_WITH(load_workload_json(path),
                    path + ": params[0].numel is too large: the parameters' bytes exceed 2^64");
}

TEST_CASE("bucket-size lists: empty items and sizes DDP cannot take are refused") {
  CHECK(parse_bucket_sizes("1,2.5") == std::vector<double>{1, 2.5});
  CHECK_THROWS_WITH(parse_bucket_sizes("1,,2"),
                    "--bucket-mb: an empty item in '1,,2' (write 1,2,4)");
  CHECK_THROWS_WITH(
      parse_bucket_sizes("1e309"),
      "--bucket-mb: '1e309' is not a number of MiB from 1 byte (0.000001) to below 2^43");
  CHECK_THROWS_WITH(
      parse_bucket_sizes("nan"),
      "--bucket-mb: 'nan' is not a number of MiB from 1 byte (0.000001) to below 2^43");
  CHECK_THROWS_WITH(parse_bucket_sizes("0"),
                    "--bucket-mb: '0' is not a number of MiB from 1 byte (0.000001) to below 2^43");
  // A cap that truncates to 0 bytes, and strtod's hexadecimal: not what anyone means.
  CHECK_THROWS_WITH(parse_bucket_sizes("1e-300"),
                    Catch::StartsWith("--bucket-mb: '1e-300' is not"));
  CHECK_THROWS_WITH(parse_bucket_sizes("0x10"), Catch::StartsWith("--bucket-mb: '0x10' is not"));
  CHECK(parse_bucket_sizes("0.000001") == std::vector<double>{0.000001});
}

TEST_CASE("top-level fields are named when missing or wrong") {
  for (const char* key : {"name", "params", "forward_us", "optimizer_us"}) {
    json j = four_params();
    j.erase(key);
    CHECK(error_for(j) == std::string(key) + " is missing");
  }
  json j = four_params();
  j["name"] = 7;
  CHECK(error_for(j) == "name must be a string");
  j = four_params();
  j["params"] = json::array();
  CHECK(error_for(j) == "params must be a non-empty array");
  j["params"] = json::object();
  CHECK(error_for(j) == "params must be a non-empty array");
  j = four_params();
  j["forward_us"] = -1;
  CHECK(error_for(j) == "forward_us must be a non-negative number");
  j = four_params();
  j["optimizer_us"] = "fast";
  CHECK(error_for(j) == "optimizer_us must be a non-negative number");
}

TEST_CASE("parameter fields are named with their index") {
  json j = four_params();
  j["params"][1] = 5;
  CHECK(error_for(j) == "params[1] must be an object");
  for (json numel : {json(0), json(-5), json(1.5), json(1e3), json("10"), json(nullptr)}) {
    j = four_params();
    j["params"][3]["numel"] = numel;
    CHECK(error_for(j) == "params[3].numel must be a positive integer");
  }
  j = four_params();
  j["params"][2].erase("numel");
  CHECK(error_for(j) == "params[2].numel is missing");
  j = four_params();
  j["params"][0]["name"] = json::array();
  CHECK(error_for(j) == "params[0].name must be a string");
  for (const char* dtype : {"float8", "unknown", "Float32"}) {
    j = four_params();
    j["params"][1]["dtype"] = dtype;
    CHECK(error_for(j) == "params[1].dtype '" + std::string(dtype) +
                              "' is not a known dtype (float32, float16, bfloat16, float64, int8, "
                              "uint8, int32, int64, ...)");
  }
  j = four_params();
  j["params"][2]["backward_us"] = -0.5;
  CHECK(error_for(j) == "params[2].backward_us must be a non-negative number");
}

TEST_CASE("ready_order must be a permutation of the parameter indices") {
  json j = four_params();
  j["ready_order"] = "reverse";
  CHECK(error_for(j) == "ready_order must be an array of parameter indices");
  j["ready_order"] = {3, -1, 1, 0};
  CHECK(error_for(j) == "ready_order[1] must be an integer in 0..3");
  j["ready_order"] = {3, 2, 1.5, 0};
  CHECK(error_for(j) == "ready_order[2] must be an integer in 0..3");
  j["ready_order"] = {3, 2, 1};
  CHECK(error_for(j) ==
        "ready_order has 3 entries, params has 4 (it must be a permutation of 0..3)");
  j["ready_order"] = {3, 2, 1, 7};
  CHECK(error_for(j) == "ready_order[3] is 7, outside 0..3");
  j["ready_order"] = {3, 1, 1, 0};
  CHECK(error_for(j) == "ready_order[2] repeats 1 (ready_order must be a permutation of 0..3)");
}

TEST_CASE("validate checks workloads built in code") {
  Workload w;
  CHECK_THROWS_WITH(validate(w, "mine"), "mine: params must not be empty");
  w.params = {{"p", 4, Dtype::float32, 1}, {"q", 4, Dtype::unknown, 1}};
  w.ready_order = {1, 0};
  CHECK_THROWS_WITH(validate(w, "mine"), "mine: params[1].dtype 'unknown' has no element size");
  w.params[1].dtype = Dtype::bits16;
  CHECK_NOTHROW(validate(w, "mine"));
  w.params[0].numel = 0;
  CHECK_THROWS_WITH(validate(w, "mine"), "mine: params[0].numel must be a positive integer");
  w.params[0].numel = 4;
  w.forward_us = std::nan("");
  CHECK_THROWS_WITH(validate(w, "mine"),
                    "mine: forward_us must be a number of microseconds from 0 to 1e12");
  w.forward_us = 0;
  w.ready_order = {};
  CHECK_THROWS_WITH(validate(w, "mine"),
                    "mine: ready_order has 0 entries, params has 2 (it must be a permutation of "
                    "0..1)");
}
