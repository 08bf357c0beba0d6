// Tests of the NCCL-ABI test library (libnccl.so.2 from tests/nccl_abi): NCCL semantics on
// host memory, with the ranks of a communicator as threads of this process.
#include <dlfcn.h>
#include <elf.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "injector/nccl/nccl_abi.h"
#include "tests/nccl_abi/config.h"
#include "tests/nccl_abi/sim_info.h"

// nccl_abi.h declares the types only; these are the entry points the application links.
extern "C" {
ncclResult_t ncclGetVersion(int* version);
ncclResult_t ncclGetUniqueId(ncclUniqueId* id);
const char* ncclGetErrorString(ncclResult_t result);
const char* ncclGetLastError(ncclComm_t comm);
ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank);
ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId id, int rank,
                                    ncclConfig_t* config);
ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist);
ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                           ncclConfig_t* config);
ncclResult_t ncclCommFinalize(ncclComm_t comm);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
ncclResult_t ncclCommAbort(ncclComm_t comm);
ncclResult_t ncclCommCount(const ncclComm_t comm, int* count);
ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device);
ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank);
ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError);
ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream);
ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream);
ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream);
ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                          ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream);
ncclResult_t ncclGroupStart();
ncclResult_t ncclGroupEnd();
ncclResult_t ncclGroupSimulateEnd(ncclSimInfo_t* simInfo);
}

namespace {

using ddpscope::nccl::dtype_size;
using Bytes = std::vector<unsigned char>;

const cudaStream_t kStream = nullptr;  // any value is fine: the library ignores streams

// kThreads: one thread per rank, joined with ncclCommInitRank (the DDP pattern).
// kGroup: this thread drives every rank of an ncclCommInitAll communicator in one group.
enum class Mode { kThreads, kGroup };

const char* mode_name(Mode m) { return m == Mode::kThreads ? "rank-threads" : "one-thread group"; }

// One rank's share of a test: issues its calls, returns the last result.
using RankBody = std::function<ncclResult_t(int rank, ncclComm_t comm)>;

// Runs body for every rank of a fresh n-rank communicator. Returns each rank's result
// and, in kGroup mode, the ncclGroupEnd result last. Uses no Catch2 macros, which are not
// thread-safe, so that tests may call it from several threads.
std::vector<ncclResult_t> run_ranks(Mode mode, int n, const RankBody& body) {
  std::vector<ncclResult_t> results(n, ncclInternalError);
  if (mode == Mode::kThreads) {
    ncclUniqueId id;
    if (ncclGetUniqueId(&id) != ncclSuccess) return results;
    std::vector<std::thread> threads;
    for (int r = 0; r < n; ++r) {
      threads.emplace_back([&, r] {
        ncclComm_t comm = nullptr;
        results[r] = ncclCommInitRank(&comm, n, id, r);
        if (results[r] == ncclSuccess) results[r] = body(r, comm);
        ncclCommDestroy(comm);
      });
    }
    for (auto& t : threads) t.join();
  } else {
    std::vector<ncclComm_t> comms(n);
    if (ncclCommInitAll(comms.data(), n, nullptr) != ncclSuccess) return results;
    ncclGroupStart();
    for (int r = 0; r < n; ++r) results[r] = body(r, comms[r]);
    results.push_back(ncclGroupEnd());
    for (ncclComm_t c : comms) ncclCommDestroy(c);
  }
  return results;
}

bool all_ok(const std::vector<ncclResult_t>& results) {
  for (ncclResult_t r : results) {
    if (r != ncclSuccess) return false;
  }
  return true;
}

// fp16 bits of a value that fp16 represents exactly (positive normal or zero).
uint16_t half_exact(double v) {
  if (v == 0) return 0;
  int e;
  const double m = std::frexp(v, &e);  // v = m * 2^e, m in [0.5, 1)
  return static_cast<uint16_t>(((e - 1 + 15) << 10) | static_cast<int>((m * 2 - 1) * 1024));
}

// Writes v (exactly representable, or an integer that wraps) as one element of type t.
void encode(ncclDataType_t t, double v, unsigned char* out) {
  auto put = [out](auto x) { std::memcpy(out, &x, sizeof x); };
  const auto i = static_cast<int64_t>(v);
  switch (t) {
    case ncclInt8:
      put(static_cast<int8_t>(i));
      break;
    case ncclUint8:
      put(static_cast<uint8_t>(i));
      break;
    case ncclInt32:
      put(static_cast<int32_t>(i));
      break;
    case ncclUint32:
      put(static_cast<uint32_t>(i));
      break;
    case ncclInt64:
      put(i);
      break;
    case ncclUint64:
      put(static_cast<uint64_t>(i));
      break;
    case ncclFloat16:
      put(half_exact(v));
      break;
    case ncclFloat32:
      put(static_cast<float>(v));
      break;
    case ncclFloat64:
      put(v);
      break;
    case ncclBfloat16: {
      const auto f = static_cast<float>(v);
      uint32_t u;
      std::memcpy(&u, &f, sizeof u);
      put(static_cast<uint16_t>(u >> 16));
      break;
    }
    default:
      FAIL("no test encoding for this datatype");
  }
}

Bytes encode_all(ncclDataType_t t, const std::vector<double>& values) {
  Bytes out(values.size() * dtype_size(t));
  for (size_t i = 0; i < values.size(); ++i) encode(t, values[i], &out[i * dtype_size(t)]);
  return out;
}

const ncclDataType_t kExactTypes[] = {ncclInt8,    ncclUint8,   ncclInt32,   ncclUint32,
                                      ncclInt64,   ncclUint64,  ncclFloat16, ncclFloat32,
                                      ncclFloat64, ncclBfloat16};
const ncclRedOp_t kOps[] = {ncclSum, ncclProd, ncclMax, ncclMin, ncclAvg};

// Inputs in 1..3 keep every op's result exact in every type above (81 at most).
double input(int rank, size_t i) { return static_cast<double>((rank * 3 + i) % 3 + 1); }

double expected(ncclRedOp_t op, ncclDataType_t t, int n, size_t i) {
  double acc = input(0, i);
  for (int r = 1; r < n; ++r) {
    const double x = input(r, i);
    switch (op) {
      case ncclProd:
        acc *= x;
        break;
      case ncclMax:
        acc = std::max(acc, x);
        break;
      case ncclMin:
        acc = std::min(acc, x);
        break;
      default:
        acc += x;
    }
  }
  const bool integral =
      t != ncclFloat16 && t != ncclFloat32 && t != ncclFloat64 && t != ncclBfloat16;
  if (op == ncclAvg) acc = integral ? std::trunc(acc / n) : acc / n;
  return acc;
}

// Sum-all-reduce of raw inputs (one vector per rank) from one thread; rank 0's output.
template <typename T>
std::vector<T> group_allreduce(ncclDataType_t t, ncclRedOp_t op,
                               const std::vector<std::vector<T>>& inputs) {
  const int n = static_cast<int>(inputs.size());
  std::vector<std::vector<T>> out(n, std::vector<T>(inputs[0].size()));
  const auto results = run_ranks(Mode::kGroup, n, [&](int r, ncclComm_t c) {
    return ncclAllReduce(inputs[r].data(), out[r].data(), inputs[r].size(), t, op, c, kStream);
  });
  REQUIRE(all_ok(results));
  for (int r = 1; r < n; ++r) CHECK(out[r] == out[0]);
  return out[0];
}

// Name -> binding (STB_GLOBAL, STB_WEAK, ...) of every symbol an ELF file defines for
// dynamic linking, read from its .dynsym section.
std::map<std::string, int> defined_dynamic_symbols(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  const std::vector<char> data((std::istreambuf_iterator<char>(file)), {});
  REQUIRE(data.size() > sizeof(Elf64_Ehdr));
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(data.data());
  REQUIRE(std::memcmp(eh->e_ident, ELFMAG, SELFMAG) == 0);
  REQUIRE(eh->e_ident[EI_CLASS] == ELFCLASS64);
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(data.data() + eh->e_shoff);
  std::map<std::string, int> out;
  for (int s = 0; s < eh->e_shnum; ++s) {
    if (sections[s].sh_type != SHT_DYNSYM) continue;
    const char* names = data.data() + sections[sections[s].sh_link].sh_offset;
    const auto* syms = reinterpret_cast<const Elf64_Sym*>(data.data() + sections[s].sh_offset);
    for (size_t i = 0; i < sections[s].sh_size / sizeof(Elf64_Sym); ++i) {
      if (syms[i].st_shndx == SHN_UNDEF || syms[i].st_name == 0) continue;
      out[names + syms[i].st_name] = ELF64_ST_BIND(syms[i].st_info);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("version, unique ids and error strings") {
  int version = 0;
  REQUIRE(ncclGetVersion(&version) == ncclSuccess);
  CHECK(version == 22809);
  ncclUniqueId a, b;
  REQUIRE(ncclGetUniqueId(&a) == ncclSuccess);
  REQUIRE(ncclGetUniqueId(&b) == ncclSuccess);
  CHECK(std::memcmp(&a, &b, sizeof a) != 0);
  CHECK(std::string(ncclGetErrorString(ncclSuccess)) == "no error");
  CHECK(std::string(ncclGetErrorString(ncclInvalidArgument)).find("invalid argument") == 0);
  CHECK(std::string(ncclGetErrorString(static_cast<ncclResult_t>(99))) == "unknown result code");
}

TEST_CASE("every entry point is a strong pnccl symbol with a weak nccl alias") {
  const std::vector<std::string> names = {"GetVersion",
                                          "GetUniqueId",
                                          "GetErrorString",
                                          "GetLastError",
                                          "CommInitRank",
                                          "CommInitRankConfig",
                                          "CommInitAll",
                                          "CommSplit",
                                          "CommFinalize",
                                          "CommDestroy",
                                          "CommAbort",
                                          "CommCount",
                                          "CommCuDevice",
                                          "CommUserRank",
                                          "CommGetAsyncError",
                                          "AllReduce",
                                          "Broadcast",
                                          "Bcast",
                                          "Reduce",
                                          "AllGather",
                                          "ReduceScatter",
                                          "AlltoAll",
                                          "Gather",
                                          "Scatter",
                                          "Send",
                                          "Recv",
                                          "GroupStart",
                                          "GroupEnd",
                                          "GroupSimulateEnd"};
  void* lib = dlopen("libnccl.so.2", RTLD_NOW | RTLD_NOLOAD);  // the copy this test links
  REQUIRE(lib != nullptr);
  Dl_info info{};
  REQUIRE(dladdr(dlsym(lib, "pncclAllReduce"), &info) != 0);
  const auto symbols = defined_dynamic_symbols(info.dli_fname);
  for (const std::string& name : names) {
    INFO(name);
    void* weak = dlsym(lib, ("nccl" + name).c_str());
    void* strong = dlsym(lib, ("pnccl" + name).c_str());
    REQUIRE(weak != nullptr);
    CHECK(weak == strong);
    CHECK(symbols.at("nccl" + name) == STB_WEAK);
    CHECK(symbols.at("pnccl" + name) == STB_GLOBAL);
  }
  CHECK(symbols.size() == 2 * names.size());  // nothing but the NCCL entry points
  dlclose(lib);
}

TEST_CASE("all-reduce applies every op to every datatype") {
  const Mode mode = GENERATE(Mode::kThreads, Mode::kGroup);
  const int n = 4;
  const size_t count = 37;
  for (ncclDataType_t t : kExactTypes) {
    for (ncclRedOp_t op : kOps) {
      INFO(mode_name(mode) << ", dtype " << t << ", op " << op);
      std::vector<Bytes> send(n), recv(n, Bytes(count * dtype_size(t), 0xAB));
      for (int r = 0; r < n; ++r) {
        std::vector<double> v(count);
        for (size_t i = 0; i < count; ++i) v[i] = input(r, i);
        send[r] = encode_all(t, v);
      }
      std::vector<double> want(count);
      for (size_t i = 0; i < count; ++i) want[i] = expected(op, t, n, i);
      const auto results = run_ranks(mode, n, [&](int r, ncclComm_t c) {
        return ncclAllReduce(send[r].data(), recv[r].data(), count, t, op, c, kStream);
      });
      REQUIRE(all_ok(results));
      for (int r = 0; r < n; ++r) CHECK(recv[r] == encode_all(t, want));
    }
  }
}

TEST_CASE("all-reduce in place") {
  const Mode mode = GENERATE(Mode::kThreads, Mode::kGroup);
  INFO(mode_name(mode));
  std::vector<std::vector<float>> buf = {{1, 2}, {10, 20}, {100, 200}};
  const auto results = run_ranks(mode, 3, [&](int r, ncclComm_t c) {
    return ncclAllReduce(buf[r].data(), buf[r].data(), 2, ncclFloat32, ncclSum, c, kStream);
  });
  REQUIRE(all_ok(results));
  for (const auto& b : buf) CHECK(b == std::vector<float>{111, 222});
}

TEST_CASE("narrow floats round to nearest even") {
  // fp16 has 11 significant bits: 2049 and 2051 are ties between neighbours 2 apart.
  CHECK(group_allreduce<uint16_t>(ncclFloat16, ncclSum, {{0x6800, 0x6800}, {0x3C00, 0x4200}}) ==
        std::vector<uint16_t>{0x6800, 0x6802});
  CHECK(group_allreduce<uint16_t>(ncclFloat16, ncclSum, {{0x7BFF}, {0x7BFF}}) ==
        std::vector<uint16_t>{0x7C00});  // 2 * 65504 overflows to inf
  CHECK(group_allreduce<uint16_t>(ncclFloat16, ncclAvg, {{0x3C00}, {0x4000}, {0x4200}, {0x4400}}) ==
        std::vector<uint16_t>{0x4100});  // avg(1, 2, 3, 4) = 2.5
  // bf16 has 8: 257 and 259 are ties.
  CHECK(group_allreduce<uint16_t>(ncclBfloat16, ncclSum, {{0x4380, 0x4380}, {0x3F80, 0x4040}}) ==
        std::vector<uint16_t>{0x4380, 0x4382});
  // fp8: 4 * 1.0 = 4.0; e4m3 saturates at 448 instead of overflowing.
  CHECK(group_allreduce<uint8_t>(ncclFloat8e4m3, ncclSum,
                                 std::vector<std::vector<uint8_t>>(4, {0x38, 0x7E})) ==
        std::vector<uint8_t>{0x48, 0x7E});
  CHECK(group_allreduce<uint8_t>(ncclFloat8e5m2, ncclSum,
                                 std::vector<std::vector<uint8_t>>(4, {0x3C})) ==
        std::vector<uint8_t>{0x44});
}

TEST_CASE("broadcast and bcast") {
  const Mode mode = GENERATE(Mode::kThreads, Mode::kGroup);
  INFO(mode_name(mode));
  const int n = 4, root = 2;
  const std::vector<float> data = {1.5f, -2.0f, 3.25f};
  std::vector<std::vector<float>> recv(n, std::vector<float>(3, 0));
  auto results = run_ranks(mode, n, [&](int r, ncclComm_t c) {
    // Non-root ranks' sendbuff is unused; null is allowed.
    return ncclBroadcast(r == root ? data.data() : nullptr, recv[r].data(), 3, ncclFloat32, root, c,
                         kStream);
  });
  REQUIRE(all_ok(results));
  for (const auto& v : recv) CHECK(v == data);

  std::vector<std::vector<int64_t>> buf(n, std::vector<int64_t>(2, -1));
  buf[1] = {7, 8};
  results = run_ranks(mode, n, [&](int r, ncclComm_t c) {
    return ncclBcast(buf[r].data(), 2, ncclInt64, 1, c, kStream);
  });
  REQUIRE(all_ok(results));
  for (const auto& v : buf) CHECK(v == std::vector<int64_t>{7, 8});
}

TEST_CASE("reduce writes the root only") {
  const Mode mode = GENERATE(Mode::kThreads, Mode::kGroup);
  INFO(mode_name(mode));
  const int n = 4, root = 1;
  std::vector<std::vector<int32_t>> send(n), recv(n, std::vector<int32_t>(2, -1));
  for (int r = 0; r < n; ++r) send[r] = {r, 10 * r};
  const auto results = run_ranks(mode, n, [&](int r, ncclComm_t c) {
    return ncclReduce(send[r].data(), recv[r].data(), 2, ncclInt32, ncclMax, root, c, kStream);
  });
  REQUIRE(all_ok(results));
  for (int r = 0; r < n; ++r) {
    CHECK(recv[r] == (r == root ? std::vector<int32_t>{3, 30} : std::vector<int32_t>{-1, -1}));
  }
}

TEST_CASE("all-gather concatenates in rank order, also in place") {
  const Mode mode = GENERATE(Mode::kThreads, Mode::kGroup);
  const bool in_place = GENERATE(false, true);
  INFO(mode_name(mode) << (in_place ? ", in place" : ""));
  const int n = 4;
  const size_t count = 3;
  std::vector<int32_t> want;
  std::vector<std::vector<int32_t>> send(n), recv(n, std::vector<int32_t>(n * count, -1));
  for (int r = 0; r < n; ++r) {
    for (size_t i = 0; i < count; ++i) send[r].push_back(100 * r + static_cast<int>(i));
    want.insert(want.end(), send[r].begin(), send[r].end());
    if (in_place) std::copy(send[r].begin(), send[r].end(), recv[r].begin() + r * count);
  }
  const auto results = run_ranks(mode, n, [&](int r, ncclComm_t c) {
    const void* src = in_place ? recv[r].data() + r * count : send[r].data();
    return ncclAllGather(src, recv[r].data(), count, ncclInt32, c, kStream);
  });
  REQUIRE(all_ok(results));
  for (const auto& v : recv) CHECK(v == want);
}

TEST_CASE("reduce-scatter gives rank r block r, also in place") {
  const Mode mode = GENERATE(Mode::kThreads, Mode::kGroup);
  const bool in_place = GENERATE(false, true);
  INFO(mode_name(mode) << (in_place ? ", in place" : ""));
  const int n = 4;
  const size_t count = 2;
  std::vector<std::vector<float>> send(n), recv(n, std::vector<float>(count, -1));
  for (int r = 0; r < n; ++r) {
    for (size_t j = 0; j < n * count; ++j) send[r].push_back(static_cast<float>((r + 1) * j));
  }
  const auto results = run_ranks(mode, n, [&](int r, ncclComm_t c) {
    void* dst = in_place ? send[r].data() + r * count : recv[r].data();
    return ncclReduceScatter(send[r].data(), dst, count, ncclFloat32, ncclSum, c, kStream);
  });
  REQUIRE(all_ok(results));
  for (int r = 0; r < n; ++r) {
    const float* got = in_place ? send[r].data() + r * count : recv[r].data();
    for (size_t i = 0; i < count; ++i) CHECK(got[i] == 10.0f * static_cast<float>(r * count + i));
  }
}

TEST_CASE("all-to-all sends block j of rank i to block i of rank j") {
  const Mode mode = GENERATE(Mode::kThreads, Mode::kGroup);
  INFO(mode_name(mode));
  const int n = 3;
  const size_t count = 2;
  std::vector<std::vector<int32_t>> send(n), recv(n, std::vector<int32_t>(n * count, -1));
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      for (size_t k = 0; k < count; ++k) send[i].push_back(100 * i + 10 * j + static_cast<int>(k));
    }
  }
  const auto results = run_ranks(mode, n, [&](int r, ncclComm_t c) {
    return ncclAlltoAll(send[r].data(), recv[r].data(), count, ncclInt32, c, kStream);
  });
  REQUIRE(all_ok(results));
  for (int j = 0; j < n; ++j) {
    for (int i = 0; i < n; ++i) {
      for (size_t k = 0; k < count; ++k) {
        CHECK(recv[j][i * count + k] == 100 * i + 10 * j + static_cast<int>(k));
      }
    }
  }
}

TEST_CASE("gather and scatter") {
  const Mode mode = GENERATE(Mode::kThreads, Mode::kGroup);
  INFO(mode_name(mode));
  const int n = 4;
  std::vector<std::vector<double>> send(n), recv(n, std::vector<double>(n, -1));
  for (int r = 0; r < n; ++r) send[r] = {r + 0.5};
  auto results = run_ranks(mode, n, [&](int r, ncclComm_t c) {
    return ncclGather(send[r].data(), r == 3 ? recv[r].data() : nullptr, 1, ncclFloat64, 3, c,
                      kStream);
  });
  REQUIRE(all_ok(results));
  CHECK(recv[3] == std::vector<double>{0.5, 1.5, 2.5, 3.5});

  const std::vector<double> blocks = {10, 11, 20, 21, 30, 31, 40, 41};
  std::vector<std::vector<double>> out(n, std::vector<double>(2, -1));
  results = run_ranks(mode, n, [&](int r, ncclComm_t c) {
    return ncclScatter(r == 0 ? blocks.data() : nullptr, out[r].data(), 2, ncclFloat64, 0, c,
                       kStream);
  });
  REQUIRE(all_ok(results));
  for (int r = 0; r < n; ++r)
    CHECK(out[r] == std::vector<double>{blocks[2 * r], blocks[2 * r + 1]});
}

TEST_CASE("a grouped ring of sends and receives completes") {
  const Mode mode = GENERATE(Mode::kThreads, Mode::kGroup);
  INFO(mode_name(mode));
  const int n = 4;
  std::vector<std::vector<float>> send(n), recv(n, std::vector<float>(5, -1));
  for (int r = 0; r < n; ++r) send[r] = std::vector<float>(5, static_cast<float>(r));
  const auto results = run_ranks(mode, n, [&](int r, ncclComm_t c) {
    // Every rank sends before it receives: only grouping keeps this from deadlocking.
    // In kGroup mode this group nests inside the outer one.
    ncclGroupStart();
    ncclSend(send[r].data(), 5, ncclFloat32, (r + 1) % n, c, kStream);
    ncclRecv(recv[r].data(), 5, ncclFloat32, (r + n - 1) % n, c, kStream);
    return ncclGroupEnd();
  });
  REQUIRE(all_ok(results));
  for (int r = 0; r < n; ++r) CHECK(recv[r] == send[(r + n - 1) % n]);
}

TEST_CASE("blocking send/recv between two threads match in order") {
  int got[3] = {0, 0, 0};
  const int msgs[3] = {11, 22, 33};
  const auto results = run_ranks(Mode::kThreads, 2, [&](int r, ncclComm_t c) {
    ncclResult_t res = ncclSuccess;
    if (r == 0) {
      for (int i = 0; i < 2 && res == ncclSuccess; ++i)
        res = ncclSend(&msgs[i], 1, ncclInt32, 1, c, kStream);
      if (res == ncclSuccess) res = ncclRecv(&got[2], 1, ncclInt32, 1, c, kStream);
    } else {
      for (int i = 0; i < 2 && res == ncclSuccess; ++i)
        res = ncclRecv(&got[i], 1, ncclInt32, 0, c, kStream);
      if (res == ncclSuccess) res = ncclSend(&msgs[2], 1, ncclInt32, 0, c, kStream);
    }
    return res;
  });
  REQUIRE(all_ok(results));
  CHECK(got[0] == 11);
  CHECK(got[1] == 22);
  CHECK(got[2] == 33);
}

TEST_CASE("a rank can send to itself inside a group") {
  ncclComm_t comm;
  REQUIRE(ncclCommInitAll(&comm, 1, nullptr) == ncclSuccess);
  const int64_t x = 42;
  int64_t y = 0;
  ncclGroupStart();
  ncclSend(&x, 1, ncclInt64, 0, comm, kStream);
  ncclRecv(&y, 1, ncclInt64, 0, comm, kStream);
  REQUIRE(ncclGroupEnd() == ncclSuccess);
  CHECK(y == 42);
  ncclCommDestroy(comm);
}

TEST_CASE("a simulated group estimates its calls and runs none, without simInfo it runs") {
  ncclComm_t comm;
  REQUIRE(ncclCommInitAll(&comm, 1, nullptr) == ncclSuccess);
  const int64_t x = 42;
  int64_t y = 0;
  auto sim = ddpscope::testnccl::sim_info_initializer();
  ncclGroupStart();
  ncclSend(&x, 1, ncclInt64, 0, comm, kStream);
  ncclRecv(&y, 1, ncclInt64, 0, comm, kStream);
  REQUIRE(ncclGroupSimulateEnd(reinterpret_cast<ncclSimInfo_t*>(&sim)) == ncclSuccess);
  CHECK(y == 0);
  CHECK(sim.estimatedTime > 0);
  // A simInfo not made by the initializer: the group ends, failed, nothing run.
  auto bad = sim;
  bad.magic = 1;
  ncclGroupStart();
  ncclSend(&x, 1, ncclInt64, 0, comm, kStream);
  ncclRecv(&y, 1, ncclInt64, 0, comm, kStream);
  CHECK(ncclGroupSimulateEnd(reinterpret_cast<ncclSimInfo_t*>(&bad)) == ncclInvalidArgument);
  CHECK(y == 0);
  CHECK(ncclGroupEnd() == ncclInvalidUsage);  // no group left open
  // Nested: only the outermost end decides; a null simInfo is ncclGroupEnd.
  ncclGroupStart();
  ncclGroupStart();
  ncclSend(&x, 1, ncclInt64, 0, comm, kStream);
  ncclRecv(&y, 1, ncclInt64, 0, comm, kStream);
  REQUIRE(ncclGroupSimulateEnd(reinterpret_cast<ncclSimInfo_t*>(&sim)) == ncclSuccess);
  REQUIRE(ncclGroupSimulateEnd(nullptr) == ncclSuccess);
  CHECK(y == 42);
  ncclCommDestroy(comm);
}

TEST_CASE("a non-blocking split is in progress until every rank has called") {
  ncclComm_t parent[2], sub[2] = {nullptr, nullptr};
  REQUIRE(ncclCommInitAll(parent, 2, nullptr) == ncclSuccess);
  ddpscope::testnccl::ConfigPrefix config{sizeof config, ddpscope::testnccl::kConfigMagic, 22809,
                                          0};
  auto* cfg = reinterpret_cast<ncclConfig_t*>(&config);
  // One thread can drive both ranks: the first call returns before the second.
  REQUIRE(ncclCommSplit(parent[0], 0, 0, &sub[0], cfg) == ncclInProgress);
  REQUIRE(sub[0] != nullptr);
  ncclResult_t state = ncclSuccess;
  CHECK(ncclCommGetAsyncError(sub[0], &state) == ncclSuccess);
  CHECK(state == ncclInProgress);
  int count = -1;
  CHECK(ncclCommCount(sub[0], &count) == ncclInvalidArgument);  // as NCCL: not ready yet
  CHECK(std::string(ncclGetLastError(sub[0])).find("before the previous operation") !=
        std::string::npos);
  CHECK(ncclCommSplit(parent[1], 0, 1, &sub[1], cfg) == ncclInProgress);
  for (ncclComm_t c : sub) {
    CHECK(ncclCommGetAsyncError(c, &state) == ncclSuccess);
    CHECK(state == ncclSuccess);
    CHECK(ncclCommCount(c, &count) == ncclSuccess);
    CHECK(count == 2);
  }
  int rank = -1;
  CHECK(ncclCommUserRank(sub[1], &rank) == ncclSuccess);
  CHECK(rank == 1);
  int32_t in[2] = {3, 4}, out[2] = {0, 0};
  ncclGroupStart();
  for (int r = 0; r < 2; ++r)
    ncclAllReduce(&in[r], &out[r], 1, ncclInt32, ncclSum, sub[r], kStream);
  REQUIRE(ncclGroupEnd() == ncclSuccess);
  CHECK(out[0] == 7);
  CHECK(out[1] == 7);
  for (int r = 0; r < 2; ++r) {
    ncclCommDestroy(sub[r]);
    ncclCommDestroy(parent[r]);
  }
}

TEST_CASE("split orders ranks by key and inherits devices") {
  const int n = 4;
  struct Seen {
    int count = -1, rank = -1, device = -1;
    int32_t sum = -1;
  };
  std::vector<Seen> seen(n);
  ::setenv("DDPSCOPE_TEST_DEVICE", "5", 1);
  const auto results = run_ranks(Mode::kThreads, n, [&](int r, ncclComm_t c) {
    ncclComm_t sub = nullptr;
    // Colors even/odd; negative keys reverse the order of the old ranks.
    ncclResult_t res = ncclCommSplit(c, r % 2, -r, &sub, nullptr);
    if (res != ncclSuccess) return res;
    ncclCommCount(sub, &seen[r].count);
    ncclCommUserRank(sub, &seen[r].rank);
    ncclCommCuDevice(sub, &seen[r].device);
    const int32_t mine = r + 1;
    res = ncclAllReduce(&mine, &seen[r].sum, 1, ncclInt32, ncclSum, sub, kStream);
    ncclCommDestroy(sub);
    return res;
  });
  ::unsetenv("DDPSCOPE_TEST_DEVICE");
  REQUIRE(all_ok(results));
  const int want_rank[n] = {1, 1, 0, 0};  // old 2 -> 0, old 0 -> 1; old 3 -> 0, old 1 -> 1
  for (int r = 0; r < n; ++r) {
    INFO("old rank " << r);
    CHECK(seen[r].count == 2);
    CHECK(seen[r].rank == want_rank[r]);
    CHECK(seen[r].device == 5);
    CHECK(seen[r].sum == (r % 2 == 0 ? 1 + 3 : 2 + 4));
  }
}

TEST_CASE("split inside a group, with NCCL_SPLIT_NOCOLOR") {
  const int n = 4;
  std::vector<ncclComm_t> comms(n), subs(n, reinterpret_cast<ncclComm_t>(1));
  const int devices[n] = {7, 6, 5, 4};
  REQUIRE(ncclCommInitAll(comms.data(), n, devices) == ncclSuccess);
  ncclGroupStart();
  for (int r = 0; r < n; ++r) {
    const int color = r == 3 ? DDPSCOPE_NCCL_SPLIT_NOCOLOR : 0;
    CHECK(ncclCommSplit(comms[r], color, r, &subs[r], nullptr) == ncclSuccess);
  }
  REQUIRE(ncclGroupEnd() == ncclSuccess);
  CHECK(subs[3] == nullptr);
  // Grouped calls read their buffers at ncclGroupEnd: they must outlive the loop.
  const std::vector<float> in = {1, 2, 3};
  std::vector<float> out(3, 0);
  ncclGroupStart();
  for (int r = 0; r < 3; ++r) {
    int count = 0, rank = -1, device = -1;
    CHECK(ncclCommCount(subs[r], &count) == ncclSuccess);
    CHECK(ncclCommUserRank(subs[r], &rank) == ncclSuccess);
    CHECK(ncclCommCuDevice(subs[r], &device) == ncclSuccess);
    CHECK(count == 3);
    CHECK(rank == r);
    CHECK(device == devices[r]);
    ncclAllReduce(&in[r], &out[r], 1, ncclFloat32, ncclProd, subs[r], kStream);
  }
  REQUIRE(ncclGroupEnd() == ncclSuccess);
  CHECK(out == std::vector<float>{6, 6, 6});
  for (int r = 0; r < 3; ++r) ncclCommDestroy(subs[r]);
  for (ncclComm_t c : comms) ncclCommDestroy(c);
}

TEST_CASE("InitRank inside a group from one thread, used in the same group") {
  const int n = 3;
  ncclUniqueId id;
  REQUIRE(ncclGetUniqueId(&id) == ncclSuccess);
  std::vector<ncclComm_t> comms(n, nullptr);
  std::vector<int32_t> out(n, 0);
  const int32_t one = 1;
  ncclGroupStart();
  for (int r = 0; r < n; ++r) {
    CHECK(ncclCommInitRankConfig(&comms[r], n, id, r, nullptr) == ncclSuccess);
    CHECK(comms[r] != nullptr);
  }
  for (int r = 0; r < n; ++r) {
    CHECK(ncclAllReduce(&one, &out[r], 1, ncclInt32, ncclSum, comms[r], kStream) == ncclSuccess);
  }
  REQUIRE(ncclGroupEnd() == ncclSuccess);
  CHECK(out == std::vector<int32_t>(n, n));
  for (ncclComm_t c : comms) ncclCommDestroy(c);
}

TEST_CASE("devices: devlist for InitAll, DDPSCOPE_TEST_DEVICE or the rank for InitRank") {
  ncclUniqueId id;
  ncclComm_t comm;
  int device = -1;
  REQUIRE(ncclGetUniqueId(&id) == ncclSuccess);
  ::setenv("DDPSCOPE_TEST_DEVICE", "3", 1);
  REQUIRE(ncclCommInitRank(&comm, 1, id, 0) == ncclSuccess);
  ::unsetenv("DDPSCOPE_TEST_DEVICE");
  CHECK(ncclCommCuDevice(comm, &device) == ncclSuccess);
  CHECK(device == 3);
  ncclCommDestroy(comm);

  std::vector<int> devices(3, -1);
  run_ranks(Mode::kThreads, 3,
            [&](int r, ncclComm_t c) { return ncclCommCuDevice(c, &devices[r]); });
  CHECK(devices == std::vector<int>{0, 1, 2});
}

TEST_CASE("invalid arguments are rejected without running anything") {
  ncclComm_t comms[2];
  REQUIRE(ncclCommInitAll(comms, 2, nullptr) == ncclSuccess);
  float x[4] = {1, 2, 3, 4}, y[4] = {0, 0, 0, 0};
  const auto bad_dtype = static_cast<ncclDataType_t>(42);
  const auto bad_op = static_cast<ncclRedOp_t>(9);

  SECTION("null communicator") {
    CHECK(ncclAllReduce(x, y, 1, ncclFloat32, ncclSum, nullptr, kStream) == ncclInvalidArgument);
    CHECK(ncclBroadcast(x, y, 1, ncclFloat32, 0, nullptr, kStream) == ncclInvalidArgument);
    CHECK(ncclReduce(x, y, 1, ncclFloat32, ncclSum, 0, nullptr, kStream) == ncclInvalidArgument);
    CHECK(ncclAllGather(x, y, 1, ncclFloat32, nullptr, kStream) == ncclInvalidArgument);
    CHECK(ncclReduceScatter(x, y, 1, ncclFloat32, ncclSum, nullptr, kStream) ==
          ncclInvalidArgument);
    CHECK(ncclAlltoAll(x, y, 1, ncclFloat32, nullptr, kStream) == ncclInvalidArgument);
    CHECK(ncclGather(x, y, 1, ncclFloat32, 0, nullptr, kStream) == ncclInvalidArgument);
    CHECK(ncclScatter(x, y, 1, ncclFloat32, 0, nullptr, kStream) == ncclInvalidArgument);
    CHECK(ncclSend(x, 1, ncclFloat32, 0, nullptr, kStream) == ncclInvalidArgument);
    CHECK(ncclRecv(y, 1, ncclFloat32, 0, nullptr, kStream) == ncclInvalidArgument);
    ncclComm_t sub;
    CHECK(ncclCommSplit(nullptr, 0, 0, &sub, nullptr) == ncclInvalidArgument);
    int v;
    CHECK(ncclCommCount(nullptr, &v) == ncclInvalidArgument);
    CHECK(ncclCommCuDevice(nullptr, &v) == ncclInvalidArgument);
    CHECK(ncclCommUserRank(nullptr, &v) == ncclInvalidArgument);
    CHECK(ncclCommFinalize(nullptr) == ncclInvalidArgument);
    CHECK(ncclCommDestroy(nullptr) == ncclSuccess);  // as in NCCL: a no-op
    CHECK(std::string(ncclGetLastError(nullptr)) == "invalid communicator");
  }
  SECTION("bad root, peer, datatype, op, buffers") {
    CHECK(ncclBroadcast(x, y, 1, ncclFloat32, 2, comms[0], kStream) == ncclInvalidArgument);
    CHECK(ncclReduce(x, y, 1, ncclFloat32, ncclSum, -1, comms[0], kStream) == ncclInvalidArgument);
    CHECK(ncclGather(x, y, 1, ncclFloat32, 5, comms[0], kStream) == ncclInvalidArgument);
    CHECK(ncclSend(x, 1, ncclFloat32, 2, comms[0], kStream) == ncclInvalidArgument);
    CHECK(ncclRecv(y, 1, ncclFloat32, -1, comms[0], kStream) == ncclInvalidArgument);
    CHECK(ncclAllReduce(x, y, 1, bad_dtype, ncclSum, comms[0], kStream) == ncclInvalidArgument);
    CHECK(ncclAllReduce(x, y, 1, ncclFloat32, bad_op, comms[0], kStream) == ncclInvalidArgument);
    CHECK(ncclAllReduce(nullptr, y, 1, ncclFloat32, ncclSum, comms[0], kStream) ==
          ncclInvalidArgument);
    CHECK(ncclAllGather(x, nullptr, 1, ncclFloat32, comms[0], kStream) == ncclInvalidArgument);
    CHECK(ncclAllReduce(x, y, SIZE_MAX / 2, ncclFloat32, ncclSum, comms[0], kStream) ==
          ncclInvalidArgument);
    ncclComm_t sub;
    CHECK(ncclCommSplit(comms[0], -5, 0, &sub, nullptr) == ncclInvalidArgument);
    CHECK(ncclCommSplit(comms[0], 0, 0, nullptr, nullptr) == ncclInvalidArgument);
  }
  SECTION("one invalid call fails its whole group") {
    ncclGroupStart();
    CHECK(ncclAllReduce(x, y, 4, ncclFloat32, ncclSum, comms[0], kStream) == ncclSuccess);
    CHECK(ncclAllReduce(x, y, 4, bad_dtype, ncclSum, comms[1], kStream) == ncclInvalidArgument);
    CHECK(ncclGroupEnd() == ncclInvalidArgument);
    CHECK(y[0] == 0);
  }
  SECTION("group end without group start") { CHECK(ncclGroupEnd() == ncclInvalidUsage); }
  SECTION("communicator creation") {
    ncclUniqueId id;
    ncclComm_t c = nullptr;
    ncclGetUniqueId(&id);
    CHECK(ncclCommInitRank(nullptr, 2, id, 0) == ncclInvalidArgument);
    CHECK(ncclCommInitRank(&c, 0, id, 0) == ncclInvalidArgument);
    CHECK(ncclCommInitRank(&c, 2, id, 2) == ncclInvalidArgument);
    CHECK(c == nullptr);
    CHECK(ncclCommInitAll(&c, 0, nullptr) == ncclInvalidArgument);
    const int dup[2] = {1, 1};
    ncclComm_t two[2];
    CHECK(ncclCommInitAll(two, 2, dup) == ncclInvalidUsage);
    // Arrivals that disagree on nranks, or claim one rank twice, fail the group; the
    // id can then still form a communicator.
    ncclComm_t pair[2];
    ncclGroupStart();
    ncclCommInitRank(&pair[0], 2, id, 0);
    ncclCommInitRank(&pair[1], 3, id, 1);
    CHECK(ncclGroupEnd() == ncclInvalidArgument);
    ncclResult_t async = ncclSuccess;
    CHECK(ncclCommGetAsyncError(pair[0], &async) == ncclSuccess);
    CHECK(async == ncclInvalidArgument);
    CHECK(ncclAllReduce(x, y, 1, ncclFloat32, ncclSum, pair[0], kStream) == ncclInvalidArgument);
    for (ncclComm_t p : pair) CHECK(ncclCommDestroy(p) == ncclSuccess);
    ncclGroupStart();
    ncclCommInitRank(&pair[0], 2, id, 0);
    ncclCommInitRank(&pair[1], 2, id, 0);
    CHECK(ncclGroupEnd() == ncclInvalidArgument);
    for (ncclComm_t p : pair) CHECK(ncclCommDestroy(p) == ncclSuccess);
    ncclGroupStart();
    for (int r = 0; r < 2; ++r) ncclCommInitRank(&pair[r], 2, id, r);
    CHECK(ncclGroupEnd() == ncclSuccess);
    for (ncclComm_t p : pair) CHECK(ncclCommDestroy(p) == ncclSuccess);
    CHECK(ncclGetVersion(nullptr) == ncclInvalidArgument);
    CHECK(ncclGetUniqueId(nullptr) == ncclInvalidArgument);
  }
  // Rejected calls consumed no sequence number: the communicator still works.
  ncclGroupStart();
  for (ncclComm_t c : comms) ncclAllReduce(x, y, 4, ncclFloat32, ncclSum, c, kStream);
  REQUIRE(ncclGroupEnd() == ncclSuccess);
  CHECK(y[3] == 8);
  for (ncclComm_t c : comms) ncclCommDestroy(c);
}

TEST_CASE("a finalized communicator rejects operations") {
  ncclComm_t comm;
  float x = 1, y = 0;
  REQUIRE(ncclCommInitAll(&comm, 1, nullptr) == ncclSuccess);
  REQUIRE(ncclCommFinalize(comm) == ncclSuccess);
  CHECK(ncclAllReduce(&x, &y, 1, ncclFloat32, ncclSum, comm, kStream) == ncclInvalidUsage);
  CHECK(ncclCommDestroy(comm) == ncclSuccess);
}

TEST_CASE("ranks that disagree fail together instead of hanging") {
  std::vector<std::vector<float>> buf(2, std::vector<float>(4, 1));
  const auto results = run_ranks(Mode::kThreads, 2, [&](int r, ncclComm_t c) {
    // Rank 1 passes a different count: the collective fails on both ranks.
    ncclResult_t res = ncclAllReduce(buf[r].data(), buf[r].data(), r == 0 ? 4 : 3, ncclFloat32,
                                     ncclSum, c, kStream);
    if (res != ncclInvalidUsage) return ncclInternalError;
    // Both ranks moved on to the next collective, which works.
    return ncclAllReduce(buf[r].data(), buf[r].data(), 4, ncclFloat32, ncclSum, c, kStream);
  });
  REQUIRE(all_ok(results));
  CHECK(buf[0] == std::vector<float>(4, 2));
  CHECK(buf[1] == std::vector<float>(4, 2));
}

TEST_CASE("abort wakes a rank blocked on a collective") {
  ncclComm_t comms[2];
  REQUIRE(ncclCommInitAll(comms, 2, nullptr) == ncclSuccess);
  std::atomic<bool> returned{false};
  ncclResult_t blocked = ncclSuccess;
  std::thread t([&] {
    const float x = 1;
    float y = 0;
    blocked = ncclAllReduce(&x, &y, 1, ncclFloat32, ncclSum, comms[0], kStream);
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  CHECK_FALSE(returned.load());  // rank 1 never contributes
  REQUIRE(ncclCommAbort(comms[1]) == ncclSuccess);
  t.join();
  CHECK(blocked == ncclRemoteError);
  ncclResult_t async = ncclSuccess;
  CHECK(ncclCommGetAsyncError(comms[0], &async) == ncclSuccess);
  CHECK(async == ncclRemoteError);
  float z = 0;
  CHECK(ncclAllReduce(&z, &z, 1, ncclFloat32, ncclSum, comms[0], kStream) == ncclRemoteError);
  CHECK(ncclCommDestroy(comms[0]) == ncclSuccess);
}

TEST_CASE("many communicators on many threads at once") {
  const int comms = 3, n = 4, iterations = 200;
  std::atomic<int> failures{0};
  std::vector<std::thread> drivers;
  for (int k = 0; k < comms; ++k) {
    drivers.emplace_back([&, k] {
      const auto results = run_ranks(Mode::kThreads, n, [&](int r, ncclComm_t c) {
        for (int it = 0; it < iterations; ++it) {
          std::vector<int64_t> v(16, r + k + it), sum(16, 0);
          if (ncclAllReduce(v.data(), sum.data(), 16, ncclInt64, ncclSum, c, kStream) !=
                  ncclSuccess ||
              sum[15] != 4 * (k + it) + 6) {
            ++failures;
          }
          int32_t token = r == it % n ? it : -1;
          if (ncclBroadcast(&token, &token, 1, ncclInt32, it % n, c, kStream) != ncclSuccess ||
              token != it) {
            ++failures;
          }
        }
        return ncclSuccess;
      });
      if (!all_ok(results)) ++failures;
    });
  }
  for (auto& d : drivers) d.join();
  CHECK(failures.load() == 0);
}
