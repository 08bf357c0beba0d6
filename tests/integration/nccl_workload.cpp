// A program that drives NCCL's API the way a training job does, linked against
// the NCCL-ABI test library (tests/nccl_abi) and run under the injector by
// test_nccl_hooks. Each mode is one scenario; what it calls is exactly what the
// test expects to find in the database.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "injector/nccl/nccl_api.h"
#include "tests/nccl_abi/config.h"
#include "tests/nccl_abi/sim_info.h"

extern "C" ncclResult_t ncclGetUniqueId(ncclUniqueId*);
// The test library's implementation, which the injector does not hook: a
// communicator made through it is one the hooks never saw created.
extern "C" ncclResult_t pncclCommInitAll(ncclComm_t*, int, const int*);
extern "C" const char* ncclGetLastError(ncclComm_t);
extern "C" ncclResult_t pncclCommGetAsyncError(ncclComm_t, ncclResult_t*);

namespace {

void check(ncclResult_t rc, const char* what) {
  if (rc != ncclSuccess) {
    fprintf(stderr, "workload: %s failed (%d)\n", what, int(rc));
    exit(90);
  }
}

cudaStream_t stream_of(int i) { return reinterpret_cast<cudaStream_t>(uintptr_t(0x1000 + i)); }

// Every op once per rank of a 4-rank communicator, one thread per rank.
void rank_script(ncclUniqueId id, int rank, int n) {
  ncclComm_t comm;
  check(ncclCommInitRank(&comm, n, id, rank), "init");
  std::vector<float> a(4096, float(rank)), b(4096 * n);
  cudaStream_t s = stream_of(rank);
  check(ncclAllReduce(a.data(), b.data(), 1024, ncclFloat32, ncclSum, comm, s), "allreduce");
  check(ncclBroadcast(a.data(), b.data(), 512, ncclFloat32, 1, comm, s), "broadcast");
  check(ncclReduce(a.data(), b.data(), 256, ncclFloat32, ncclMax, 2, comm, s), "reduce");
  check(ncclAllGather(a.data(), b.data(), 256, ncclFloat32, comm, s), "allgather");
  check(ncclReduceScatter(a.data(), b.data(), 128, ncclFloat32, ncclSum, comm, s), "rs");
  check(ncclAlltoAll(a.data(), b.data(), 64, ncclFloat32, comm, s), "alltoall");
  check(ncclGather(a.data(), b.data(), 32, ncclFloat32, 0, comm, s), "gather");
  check(ncclScatter(a.data(), b.data(), 16, ncclFloat32, 3, comm, s), "scatter");
  check(ncclBcast(a.data(), 8, ncclInt32, 0, comm, s), "bcast");
  check(ncclGroupStart(), "group start");
  check(ncclSend(a.data(), 100, ncclFloat16, (rank + 1) % n, comm, s), "send");
  check(ncclRecv(b.data(), 100, ncclFloat16, (rank + n - 1) % n, comm, s), "recv");
  check(ncclGroupEnd(), "group end");
  ncclComm_t half;
  check(ncclCommSplit(comm, rank % 2, rank, &half, nullptr), "split");
  check(ncclAllReduce(a.data(), b.data(), 2048, ncclBfloat16, ncclAvg, half, s), "sub allreduce");
  check(ncclCommDestroy(half), "destroy half");
  check(ncclCommDestroy(comm), "destroy");
}

int mode_script() {
  ncclUniqueId id;
  check(ncclGetUniqueId(&id), "unique id");
  std::vector<std::thread> ranks;
  for (int r = 0; r < 4; ++r) ranks.emplace_back(rank_script, id, r, 4);
  for (auto& t : ranks) t.join();
  return 0;
}

// `n` threads, each the only user of one rank of an InitAll communicator,
// hammering all-reduces at once: nothing may be lost.
int mode_threads(int nthreads, int calls) {
  std::vector<ncclComm_t> comms(nthreads);
  check(ncclCommInitAll(comms.data(), nthreads, nullptr), "init all");
  std::vector<std::thread> threads;
  for (int t = 0; t < nthreads; ++t)
    threads.emplace_back([&, t] {
      float x[64] = {};
      for (int i = 0; i < calls; ++i)
        check(ncclAllReduce(x, x, 16, ncclFloat32, ncclSum, comms[t], stream_of(t)), "ar");
    });
  for (auto& t : threads) t.join();
  for (auto c : comms) ncclCommDestroy(c);
  return 0;
}

// Some calls, then "ready" on stdout and a long wait: to be killed by the test.
int mode_then_wait(int calls) {
  mode_threads(2, calls);
  printf("ready\n");
  fflush(stdout);
  sleep(60);
  return 0;
}

// DataLoader-style fork: the child's calls must not land in the parent's file.
int mode_fork() {
  mode_threads(2, 10);
  pid_t pid = fork();
  if (pid == 0) {
    mode_threads(2, 5);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

// A fork before any NCCL call, so before the injector started: the child (a
// DataLoader worker of this rank) makes calls too, then the parent. Prints
// the parent's pid.
int mode_fork_early() {
  pid_t pid = fork();
  if (pid == 0) {
    mode_threads(2, 5);
    usleep(300000);  // a worker lives on: several flush intervals pass
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  mode_threads(2, 10);
  printf("%d\n", int(getpid()));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 99;
}

// A fork-based launcher: `n` children forked before any call, each told its
// rank through RANK (as Lightning's ddp_fork does), each making 3 + rank calls.
int mode_fork_ranks(int n) {
  std::vector<pid_t> children;
  for (int r = 0; r < n; ++r) {
    pid_t pid = fork();
    if (pid == 0) {
      setenv("RANK", std::to_string(r).c_str(), 1);
      mode_threads(1, 3 + r);
      exit(0);  // a rank ends as a process does: its exit handlers flush the record
    }
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t c : children) {
    int status = 0;
    waitpid(c, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  return failed;
}

// ncclGroupSimulateEnd, as a job asks NCCL what a group would cost: the
// simulated calls never run. Then real calls, and a simulated inner group
// inside a real outer one (only the outermost end decides). Counts 4 and 2
// must not be recorded; 8, 16 and 32 must, with seq 0, 1, 2.
int mode_simulate() {
  ncclComm_t comm;
  check(ncclCommInitAll(&comm, 1, nullptr), "init all");
  float x[64] = {};
  auto sim = ddpscope::testnccl::sim_info_initializer();
  auto* sim_arg = reinterpret_cast<ncclSimInfo_t*>(&sim);
  check(ncclGroupStart(), "group start");
  check(ncclAllReduce(x, x, 4, ncclFloat32, ncclSum, comm, nullptr), "simulated allreduce");
  check(ncclGroupSimulateEnd(sim_arg), "simulate end");
  if (!(sim.estimatedTime > 0)) return 92;  // NCCL filled in its estimate
  // A simInfo NCCL refuses still ends the group; nothing of it runs.
  auto bad = sim;
  bad.magic = 0;
  check(ncclGroupStart(), "group start");
  check(ncclAllReduce(x, x, 2, ncclFloat32, ncclSum, comm, nullptr), "refused allreduce");
  if (ncclGroupSimulateEnd(reinterpret_cast<ncclSimInfo_t*>(&bad)) != ncclInvalidArgument)
    return 93;
  check(ncclGroupStart(), "group start");
  check(ncclAllReduce(x, x, 8, ncclFloat32, ncclSum, comm, nullptr), "grouped allreduce");
  check(ncclGroupEnd(), "group end");
  check(ncclAllReduce(x, x, 16, ncclFloat32, ncclSum, comm, nullptr), "allreduce");
  check(ncclGroupStart(), "outer start");
  check(ncclGroupStart(), "inner start");
  check(ncclAllReduce(x, x, 32, ncclFloat32, ncclSum, comm, nullptr), "nested allreduce");
  check(ncclGroupSimulateEnd(sim_arg), "inner simulate end");
  check(ncclGroupEnd(), "outer end");
  check(ncclCommDestroy(comm), "destroy");
  return 0;
}

// A communicator destroyed, then one made behind the hooks' back at the same
// address (malloc hands the freed handle out again): its calls must not pass
// for the destroyed one's. Prints "reused" when the address was the same.
int mode_reuse() {
  ncclComm_t first, second;
  float x[4] = {};
  check(ncclCommInitAll(&first, 1, nullptr), "init all");
  check(ncclAllReduce(x, x, 1, ncclFloat32, ncclSum, first, nullptr), "first allreduce");
  check(ncclCommDestroy(first), "destroy");
  check(pncclCommInitAll(&second, 1, nullptr), "unhooked init all");
  check(ncclAllReduce(x, x, 2, ncclFloat32, ncclSum, second, nullptr), "second allreduce");
  printf("%s\n", second == first ? "reused" : "fresh");
  return 0;
}

// Non-blocking splits (config.blocking = 0), one thread driving both ranks:
// each returns ncclInProgress at once; the job polls ncclCommGetAsyncError
// until ready, then all-gathers 16 floats. Prints NCCL's last error text as
// the job sees it right after the first split (it made no failed call).
// `unhooked_poll`: the readiness is polled where the hooks do not see it, so
// the communicators' first use is where the injector learns they are ready.
int mode_split_nonblocking(bool unhooked_poll) {
  ncclComm_t parent[2], sub[2];
  check(ncclCommInitAll(parent, 2, nullptr), "init all");
  ddpscope::testnccl::ConfigPrefix config{sizeof config, ddpscope::testnccl::kConfigMagic, 22809,
                                          0};
  auto* cfg = reinterpret_cast<ncclConfig_t*>(&config);
  if (ncclCommSplit(parent[0], 7, 0, &sub[0], cfg) != ncclInProgress) return 94;
  printf("last error: '%s'\n", ncclGetLastError(nullptr));
  if (ncclCommSplit(parent[1], 7, 1, &sub[1], cfg) != ncclInProgress) return 95;
  for (ncclComm_t c : sub) {
    ncclResult_t state = ncclInProgress;
    auto poll = unhooked_poll ? pncclCommGetAsyncError : ncclCommGetAsyncError;
    while (state == ncclInProgress) check(poll(c, &state), "async error");
    check(state, "split");
  }
  float in[2][16] = {}, out[2][32] = {};
  check(ncclGroupStart(), "group start");
  for (int r = 0; r < 2; ++r)
    check(ncclAllGather(in[r], out[r], 16, ncclFloat32, sub[r], nullptr), "allgather");
  check(ncclGroupEnd(), "group end");
  for (int r = 0; r < 2; ++r) {
    check(ncclCommDestroy(sub[r]), "destroy sub");
    check(ncclCommDestroy(parent[r]), "destroy parent");
  }
  return 0;
}

// A datatype newer than the ones ddpscope knows (the test library plays a
// newer NCCL: DDPSCOPE_TESTNCCL_NEWER_DTYPE=1): two broadcasts of it, one of
// float32.
int mode_newer_dtype() {
  ncclComm_t comm;
  check(ncclCommInitAll(&comm, 1, nullptr), "init all");
  unsigned char bytes[10] = {};
  float x[4] = {};
  auto newer = static_cast<ncclDataType_t>(12);
  check(ncclBroadcast(bytes, bytes, 10, newer, 0, comm, nullptr), "newer broadcast");
  check(ncclBroadcast(bytes, bytes, 6, newer, 0, comm, nullptr), "newer broadcast");
  check(ncclBroadcast(x, x, 4, ncclFloat32, 0, comm, nullptr), "float broadcast");
  check(ncclCommDestroy(comm), "destroy");
  return 0;
}

// `calls` all-reduces on two threads, `ms` apart: a run that lasts (its rank
// file is being written for a while).
int mode_paced(int calls, int ms) {
  for (int i = 0; i < calls; ++i) {
    mode_threads(2, 1);
    usleep(useconds_t(ms) * 1000);
  }
  return 0;
}

// A long steady job: two long-lived rank threads, each making `calls`
// all-reduces `us` microseconds apart (bench/injector_memory.sh samples the
// injector's memory over such a run).
int mode_steady(int calls, int us) {
  ncclComm_t comms[2];
  check(ncclCommInitAll(comms, 2, nullptr), "init all");
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&, t] {
      float x[64] = {};
      for (int i = 0; i < calls; ++i) {
        check(ncclAllReduce(x, x, 16, ncclFloat32, ncclSum, comms[t], stream_of(t)), "ar");
        usleep(useconds_t(us));
      }
    });
  for (auto& t : threads) t.join();
  for (auto c : comms) ncclCommDestroy(c);
  return 0;
}

// One call, then a chosen exit status: the injector must pass it on.
int mode_exit(int code) {
  mode_threads(1, 1);
  printf("workload output line\n");
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::string mode = argc > 1 ? argv[1] : "";
  int a = argc > 2 ? atoi(argv[2]) : 0, b = argc > 3 ? atoi(argv[3]) : 0;
  if (mode == "script") return mode_script();
  if (mode == "threads") return mode_threads(a, b);
  if (mode == "wait") return mode_then_wait(a);
  if (mode == "fork") return mode_fork();
  if (mode == "fork-early") return mode_fork_early();
  if (mode == "fork-ranks") return mode_fork_ranks(a);
  if (mode == "simulate") return mode_simulate();
  if (mode == "reuse") return mode_reuse();
  if (mode == "split-nonblocking") return mode_split_nonblocking(a == 1);
  if (mode == "newer-dtype") return mode_newer_dtype();
  if (mode == "exit") return mode_exit(a);
  if (mode == "paced") return mode_paced(a, b);
  if (mode == "steady") return mode_steady(a, b);
  fprintf(stderr,
          "usage: nccl_workload script|threads N CALLS|wait CALLS|fork|fork-early|fork-ranks "
          "N|simulate|reuse|split-nonblocking|newer-dtype|exit CODE|paced CALLS MS\n");
  return 2;
}
