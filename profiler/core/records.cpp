#include "profiler/core/records.h"

namespace ddpscope {

const char* name_of(CommOrigin origin) {
  switch (origin) {
    case CommOrigin::init_rank:
      return "init_rank";
    case CommOrigin::init_rank_config:
      return "init_rank_config";
    case CommOrigin::init_all:
      return "init_all";
    case CommOrigin::split:
      return "split";
    case CommOrigin::first_use:
      return "first_use";
  }
  return "first_use";
}

const char* name_of(CommEnd end) {
  switch (end) {
    case CommEnd::none:
      return "none";
    case CommEnd::destroy:
      return "destroy";
    case CommEnd::abort:
      return "abort";
    case CommEnd::finalize:
      return "finalize";
  }
  return "none";
}

CommOrigin parse_comm_origin(std::string_view n) {
  for (auto o : {CommOrigin::init_rank, CommOrigin::init_rank_config, CommOrigin::init_all,
                 CommOrigin::split})
    if (n == name_of(o)) return o;
  return CommOrigin::first_use;
}

CommEnd parse_comm_end(std::string_view n) {
  for (auto e : {CommEnd::destroy, CommEnd::abort, CommEnd::finalize})
    if (n == name_of(e)) return e;
  return CommEnd::none;
}

}  // namespace ddpscope
