// A Gloo whose option classes are laid out otherwise than the headers the
// injector was built with: the Gloo hook must run every call unchanged, read
// nothing it cannot trust (no crash, even on a wild pointer), say so once and
// record no Gloo collective.
#include <catch2/catch.hpp>
#include <filesystem>

#include "tests/support/built_path.h"
#include "tests/support/subprocess.h"

using namespace ddpscope;

namespace {

void check_mode(const std::string& mode) {
  auto plain = testing::run({FAKE_GLOO_WORKLOAD_EXE, mode});
  REQUIRE(plain.status == 0);
  REQUIRE(plain.out == "call 0: 10.75\ncall 1: 20\ncall 2: 29.25\n");

  auto dir = testing::temp_dir("gloo-layout-" + mode);
  auto hooked = testing::run({FAKE_GLOO_WORKLOAD_EXE, mode},
                             {{"LD_PRELOAD", INJECT_LIB}, {"DDPSCOPE_OUT", dir}});
  CHECK(hooked.status == 0);
  CHECK(hooked.out == plain.out);
  CHECK(std::count(hooked.err.begin(), hooked.err.end(), '\n') == 1);
  CHECK(hooked.err.find("is not laid out as the Gloo headers ddpscope was built with") !=
        std::string::npos);
  CHECK(hooked.err.find("Gloo calls pass through unrecorded") != std::string::npos);
  // Nothing recorded: no rank file was written.
  CHECK(std::filesystem::is_empty(dir));
}

}  // namespace

TEST_CASE("Gloo options of another layout: readable memory that is no gloo object") {
  check_mode("data");
}

TEST_CASE("Gloo options of another layout: a wild pointer where the context should be") {
  check_mode("wild");
}
