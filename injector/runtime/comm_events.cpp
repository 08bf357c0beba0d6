#include "injector/runtime/comm_events.h"

#include "injector/runtime/source.h"

namespace ddpscope::inject {
namespace {

CollectiveRecord to_record(const CollectiveEvent& e, const Rows& rows) {
  CollectiveRecord r;
  r.comm_id = e.comm_id;
  r.comm_rank = e.comm_rank;
  r.nranks = e.nranks;
  r.seq = e.seq;
  r.op = e.op;
  r.dtype = e.dtype;
  r.redop = e.redop;
  r.count = e.count;
  r.bytes = e.bytes;
  r.root = e.root;
  r.peer = e.peer;
  r.stream = e.stream;
  r.tid = e.tid;
  r.group_id = e.group_id;
  r.host_start_ns = rows.to_ns(e.t_start);
  r.host_end_ns = rows.to_ns(e.t_end);
  // Until a device timer says otherwise, the call itself is the best we know
  // (exact for Gloo, which runs the collective inside the call).
  r.start_ns = r.host_start_ns;
  r.end_ns = r.host_end_ns;
  r.timing = Timing::host;
  return r;
}

CommRecord to_record(const CommInitEvent& c, const Rows& rows) {
  CommRecord r;
  r.comm_id = c.comm_id;
  r.nranks = c.nranks;
  r.comm_rank = c.comm_rank;
  r.device = c.device;
  r.backend = c.backend;
  r.parent_comm_id = c.parent_comm_id;
  r.origin = c.origin;
  r.created_ns = rows.to_ns(c.t);
  return r;
}

}  // namespace

void convert_comm_event(const Event& e, Rows& rows) {
  switch (CommEventKind(e.kind)) {
    case CommEventKind::collective: {
      const auto& c = e.as<CollectiveEvent>();
      rows.collective(to_record(c, rows), c.timer, c.correlation);
      break;
    }
    case CommEventKind::collective_begin:
      rows.collective_begin(to_record(e.as<CollectiveEvent>(), rows));
      break;
    case CommEventKind::comm_init:
      rows.comm_begin(to_record(e.as<CommInitEvent>(), rows));
      break;
    case CommEventKind::comm_end:
      rows.comm_end(e.as<CommEndEvent>());
      break;
  }
}

}  // namespace ddpscope::inject
