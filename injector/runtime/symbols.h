// Finding the real function behind a hook. dlsym(RTLD_NEXT) alone is not
// enough: Python loads extension libraries RTLD_LOCAL, so NCCL and Gloo pulled
// in by torch are invisible to it (a naive Gloo hook segfaults under Debian's
// torch for exactly this reason). Order: RTLD_NEXT, then dlopen(soname,
// RTLD_NOLOAD), then any loaded object whose path names the library. NCCL's
// strong pnccl* symbols are preferred where they exist.
#pragma once

#include <initializer_list>

namespace ddpscope::inject {

// `names`: symbol names to try in order (e.g. {"pncclAllReduce", "ncclAllReduce"});
// `libs`: sonames, the first of which also serves as the path stem to look for.
// Returns null when nothing but our own hook is found.
void* find_real(std::initializer_list<const char*> names, std::initializer_list<const char*> libs);

}  // namespace ddpscope::inject
