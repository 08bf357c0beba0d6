// Capture sources as the runtime knows them: a name, and the function that
// turns one of the source's events into rows on the writer thread. A source
// (one folder under injector/: its hooks, its event bodies, its conversion)
// registers itself once and stamps its id into every event it writes; the
// rows land in the tables profiler/store declares (table.h). The runtime,
// the writer and the reader know nothing else of it.
#pragma once

#include <memory>
#include <vector>

#include "injector/runtime/event.h"
#include "profiler/core/records.h"
#include "profiler/store/writer.h"

namespace ddpscope::inject {

struct CommEndEvent;

// What a conversion writes into: rows of any declared table, and the
// runtime's communication pipeline (timers, kernel linking, communicators).
class Rows {
 public:
  virtual ~Rows() = default;

  template <typename Record>
  void add(Record r) {
    staged<Record>().rows.push_back(std::move(r));
  }
  virtual void collective(const CollectiveRecord& r, uint32_t timer, uint32_t correlation) = 0;
  // A collective entered and not yet returned (CommEventKind::collective_begin).
  virtual void collective_begin(const CollectiveRecord& r) = 0;
  virtual void comm_begin(const CommRecord& r) = 0;
  virtual void comm_end(const CommEndEvent& e) = 0;  // e.t in ticks
  virtual int64_t to_ns(uint64_t ticks) const = 0;

  // The rows added since the last call, written with the rank known at last.
  void write_staged(store::RankWriter& writer, int32_t rank);
  bool staged_empty() const;
  void discard_staged();  // nothing can be written (no output)

 private:
  struct Staged {
    virtual ~Staged() = default;
    virtual void write(store::RankWriter& w, int32_t rank) = 0;
    virtual bool empty() const = 0;
    virtual void clear() = 0;
  };
  template <typename Record>
  struct StagedRows : Staged {
    std::vector<Record> rows;
    void write(store::RankWriter& w, int32_t rank) override {
      for (auto& r : rows) {
        r.rank = rank;
        w.add(r);
      }
      rows.clear();
    }
    bool empty() const override { return rows.empty(); }
    void clear() override { rows.clear(); }
  };
  static int next_slot();
  template <typename Record>
  StagedRows<Record>& staged() {
    static const int slot = next_slot();
    if (int(staged_.size()) <= slot) staged_.resize(slot + 1);
    if (!staged_[slot]) staged_[slot] = std::make_unique<StagedRows<Record>>();
    return static_cast<StagedRows<Record>&>(*staged_[slot]);
  }
  std::vector<std::unique_ptr<Staged>> staged_;
};

struct Source {
  const char* name;
  void (*convert)(const Event& e, Rows& rows);
};

// Registers `s` (once per source, from a function-local static in its
// folder) and returns the id its events carry. At most 255 sources.
SourceId register_source(const Source& s);
// The source an event names, or null (an unknown id: the event is dropped).
const Source* find_source(SourceId id);

}  // namespace ddpscope::inject
