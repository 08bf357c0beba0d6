// A fact from the Python start-up hook (a key and a value of any length, about
// one DDP instance or FSDP unit) as a capture event: the event carries owned
// heap copies, which the writer thread takes and frees (take_fact). Used by
// ddp_source.cpp and fsdp_source.cpp, once per fact: never on a hot path.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "injector/runtime/capture.h"
#include "injector/runtime/source.h"
#include "profiler/core/clock.h"

namespace ddpscope::inject {

struct FactEvent {
  std::string* key;
  std::string* value;
  uint64_t t;
  int32_t owner;  // the DDP instance or FSDP unit
};

// Publishes one fact of `owner` as event `kind` of `source` (copies key and value).
inline void publish_fact(SourceId source, uint8_t kind, int32_t owner, const char* key,
                         const char* value) {
  if (!capturing() || !key || !value) return;
  ReentrancyGuard guard;  // attaching a thread may start the runtime
  auto* k = new std::string(key);
  auto* v = new std::string(value);
  auto* ev = reserve_event_body<FactEvent>(source, kind);
  if (!ev) {  // dropped (counted): nothing will free them but us
    delete k;
    delete v;
    return;
  }
  *ev = FactEvent{k, v, ddpscope::clock::ticks(), owner};
  publish_event();
}

// The writer thread's side: the fact's key and value, their copies freed.
inline std::pair<std::string, std::string> take_fact(const FactEvent& f) {
  std::pair<std::string, std::string> kv{std::move(*f.key), std::move(*f.value)};
  delete f.key;
  delete f.value;
  return kv;
}

}  // namespace ddpscope::inject
