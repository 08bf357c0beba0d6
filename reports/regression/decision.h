// Moved to profiler/regression/decision.h (issue 15: reports/ only renders the
// decision). Kept only for cli/check_command.cpp, which is being reworked in
// parallel; delete this file when cli/ includes profiler/regression/decision.h.
#pragma once

#include "profiler/regression/decision.h"
