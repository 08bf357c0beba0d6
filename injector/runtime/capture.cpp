#include "injector/runtime/capture.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <string>

#include "injector/runtime/counters.h"
#include "injector/runtime/identity.h"
#include "injector/runtime/log.h"
#include "injector/runtime/rank_file.h"
#include "injector/runtime/writer.h"
#include "profiler/core/clock.h"
#include "profiler/core/inject_options.h"

namespace ddpscope::inject {

std::atomic<int> g_state{int(State::not_started)};
thread_local ThreadState tl_thread DDPSCOPE_TLS;

namespace {

BufferRegistry* g_buffers = new BufferRegistry;  // never freed: threads may outlive exit
pid_t g_owner_pid = 0;                           // the process whose events we write
uint32_t g_buffer_events = 65536;
// Stopped (SIGTERM, SIGINT) or dying (an abort, a fault): the writer flushes
// what the rings hold before the app's own handling, or the default action,
// goes on. A rank that aborts inside a collective (Gloo's enforce calls
// std::terminate) keeps that collective in flight and everything before it.
constexpr int kSignals[] = {SIGTERM, SIGINT, SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
constexpr int kSignalCount = int(sizeof kSignals / sizeof kSignals[0]);
struct sigaction g_previous[kSignalCount];

int signal_index(int sig) {
  for (int i = 0; i < kSignalCount; ++i)
    if (kSignals[i] == sig) return i;
  return 0;
}

uint32_t parse_capacity(std::string_view v) {
  unsigned long n = std::strtoul(std::string(v).c_str(), nullptr, 10);
  if (n < 64) n = 64;
  if (n > (1ul << 24)) n = 1ul << 24;
  uint32_t p = 64;
  while (p < n) p <<= 1;
  return p;
}

// Re-delivers a signal to whatever the app had installed before us.
void chain(int index, int sig, siginfo_t* info, void* uc) {
  const struct sigaction& prev = g_previous[index];
  if (prev.sa_flags & SA_SIGINFO) {
    if (prev.sa_sigaction) prev.sa_sigaction(sig, info, uc);
  } else if (prev.sa_handler == SIG_DFL) {
    sigaction(sig, &prev, nullptr);
    raise(sig);  // blocked while we run; delivered with the default action on return
  } else if (prev.sa_handler != SIG_IGN) {
    prev.sa_handler(sig);
  }
}

void on_signal(int sig, siginfo_t* info, void* uc) {
  int saved = errno;
  if (getpid() == g_owner_pid) writer_flush_from_signal();
  chain(signal_index(sig), sig, info, uc);
  errno = saved;
}

void install_signal_handlers() {
  for (int i = 0; i < kSignalCount; ++i) {
    struct sigaction current {};
    sigaction(kSignals[i], nullptr, &current);
    if (!(current.sa_flags & SA_SIGINFO) && current.sa_handler == SIG_IGN)
      continue;  // keep "ignored"
    g_previous[i] = current;
    struct sigaction ours {};
    ours.sa_sigaction = on_signal;
    // Keep the app's restart semantics: Python installs its SIGINT handler
    // without SA_RESTART so that Ctrl-C interrupts a blocking call at once.
    ours.sa_flags = SA_SIGINFO | (current.sa_flags & (SA_RESTART | SA_ONSTACK));
    sigemptyset(&ours.sa_mask);
    sigaction(kSignals[i], &ours, nullptr);
  }
}

// Registered when the library loads, so that a fork before recording started
// is seen too. A child of a running process (a DataLoader worker) must never
// write its parent's events: it inherits copies of the rings but no writer
// thread, so it stays silent. A child forked before the parent started has
// nothing of its parent's: it may start its own runtime, and records only as
// a rank of its own (identity.h: is_helper_of_parent).
ForkOrigin g_fork_origin;
int g_rank_at_fork = -1;

void before_fork() {  // in the parent: its rank as its environment names it now
  g_rank_at_fork = identity_from_env().rank;
}

void on_fork_child() {
  int s = g_state.load(std::memory_order_relaxed);
  if (s == int(State::not_started)) {
    g_fork_origin = ForkOrigin{true, g_rank_at_fork};
    return;
  }
  if (s == int(State::starting) || s == int(State::running))
    g_state.store(int(State::finalized), std::memory_order_relaxed);
}

void start_runtime() {
  g_owner_pid = getpid();
  WriterConfig config;
  config.out_dir = std::string(inject_option("DDPSCOPE_OUT"));
  config.flush_ms = std::max(1, std::atoi(std::string(inject_option("DDPSCOPE_FLUSH_MS")).c_str()));
  writer_start(config, g_buffers);
  install_signal_handlers();
  std::atexit(finalize);
}

// The first hooked call starts the runtime; calls racing it on other threads
// wait until it runs. No std::call_once: a fork while another thread is
// inside it would leave the child's flag taken forever.
bool ensure_started() {
  int s = g_state.load(std::memory_order_acquire);
  if (s == int(State::not_started) &&
      g_state.compare_exchange_strong(s, int(State::starting), std::memory_order_acq_rel)) {
    start_runtime();
    s = int(State::starting);  // finalize() may have run meanwhile (exit on another thread)
    g_state.compare_exchange_strong(s, int(State::running), std::memory_order_acq_rel);
  }
  while ((s = g_state.load(std::memory_order_acquire)) == int(State::starting)) sched_yield();
  return s == int(State::running);
}

// Hands a dying thread's buffer back for adoption.
struct ThreadExit {
  ~ThreadExit() {
    ThreadState& t = this_thread();
    if (t.buffer) t.buffer->orphaned.store(true, std::memory_order_release);
    t.buffer = nullptr;
  }
};

__attribute__((constructor)) void on_load() {
  g_load_ns = clock::monotonic_ns();
  g_buffer_events = parse_capacity(inject_option("DDPSCOPE_BUFFER_EVENTS"));
  pthread_atfork(before_fork, nullptr, on_fork_child);
}

}  // namespace

ThreadBuffer* attach_thread() {
  if (!ensure_started()) return nullptr;
  if (getpid() != g_owner_pid) return nullptr;
  ThreadState& self = this_thread();
  self.tid = uint32_t(syscall(SYS_gettid));
  ThreadBuffer* b = g_buffers->acquire(g_buffer_events, self.tid);
  if (!b) {  // its calls still run: only they are not recorded
    count(Counter::unrecorded_threads);
    notice_once(Notice::no_thread_buffer,
                "a thread got no event buffer (%d recording threads, or no memory for its "
                "ring); that thread's calls are not recorded (meta count:unrecorded_threads)",
                g_buffers->size());
    return nullptr;
  }
  static thread_local ThreadExit exit_guard;
  (void)exit_guard;
  self.buffer = b;
  return b;
}

void finalize() {
  if (getpid() != g_owner_pid) return;
  int s = g_state.exchange(int(State::finalized));
  if (s == int(State::finalized)) return;
  writer_stop();
}

uint64_t dropped_events() { return g_buffers->dropped(); }

const ForkOrigin& fork_origin() { return g_fork_origin; }

}  // namespace ddpscope::inject
