// Which real nccl.h headers the build checked nccl_abi.h against: each check
// translation unit (check_abi.cpp, compiled once per header) registers itself,
// and nccl_abi_checked prints the list, so a test log says what was proven.
#pragma once

#include <string>
#include <vector>

namespace ddpscope::nccl_abi_check {

struct CheckedHeader {
  std::string label;  // where it came from: toolkit, system, wheel-python3.11
  std::string path;
  int major, minor, patch, version_code;
};

inline std::vector<CheckedHeader>& checked_headers() {
  static std::vector<CheckedHeader> all;
  return all;
}

inline bool add_checked(CheckedHeader h) {
  checked_headers().push_back(std::move(h));
  return true;
}

}  // namespace ddpscope::nccl_abi_check
