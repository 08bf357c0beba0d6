// The report's sections (section.h): each file's one function, and the list.
#include "reports/sections/section.h"

namespace ddpscope::reports {

Section stragglers_section();  // stragglers.cpp: who runs late, per rank and iteration
Section hangs_section();       // hangs.cpp: where the job stopped, mismatched collectives
Section fsdp_section();        // fsdp.cpp: FSDP2 units, their phases and what they cost

const std::vector<Section>& sections() {
  static const std::vector<Section> all = {fsdp_section(), stragglers_section(), hangs_section()};
  return all;
}

}  // namespace ddpscope::reports
