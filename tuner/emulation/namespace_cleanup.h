// Network namespaces never outlive the run that made them. Each is registered
// here *before* it is created, and removed when the run ends, whichever way:
// normally or by an exception (CleanupGuard's destructor), or by SIGINT,
// SIGTERM, SIGHUP or SIGQUIT (a handler that removes them, then re-raises the
// signal with its default action, so the process still dies of it).
// Removing a namespace's name drops the last reference to it once its
// processes are gone, and the kernel then deletes its links and qdiscs.
//
// Names: "ddpscope-<pid>-<what>", so that a later run can tell leftovers of a
// dead run (a killed -9 coordinator) from those of a live one.
#pragma once

#include <string>
#include <vector>

namespace ddpscope::tuner::emulation {

// "ddpscope-<pid of this process>-": the prefix of every namespace of this run.
std::string run_prefix();

// Records `name` for cleanup; call before `ip netns add name`.
void register_namespace(const std::string& name);

// Removes every registered namespace's name (as `ip netns del` does: detach
// the bind mount, unlink the file). Async-signal-safe.
void remove_registered_namespaces();

// Removes "ddpscope-<pid>-*" namespaces whose process no longer exists;
// returns their names. (A pid reused by another process keeps its leftovers
// until that process ends.)
std::vector<std::string> remove_stale_namespaces();

// Installs the signal handlers for its lifetime; on destruction removes every
// registered namespace and restores the previous handlers.
class CleanupGuard {
 public:
  CleanupGuard();
  ~CleanupGuard();
  CleanupGuard(const CleanupGuard&) = delete;
  CleanupGuard& operator=(const CleanupGuard&) = delete;
};

}  // namespace ddpscope::tuner::emulation
