// The NVTX injection: NVTX (the header-only NVTX3 in the app, or the older
// libnvToolsExt) loads the library named by NVTX_INJECTION64_PATH — ours, set
// by `ddpscope record` — and calls InitializeInjectionNvtx2 once per NVTX
// instance in the process. We fill the CORE and CORE2 callback tables with the
// range calls; NVTX turns every entry we leave empty into a no-op (marks,
// categories, thread names, resources, domain destroy), so the job pays nothing
// for calls we do not record.
//
// Never perturb the job: modules or callback ids we do not know (a newer NVTX)
// are left alone, and a table smaller than ours (an older NVTX) only gets the
// entries it has.
#include "injector/nvtx/nvtx_names.h"
#include "injector/nvtx/nvtx_ranges.h"
#include "injector/runtime/capture.h"
#include "profiler/core/inject_options.h"

namespace ddpscope::inject::nvtx {
namespace {

// Names are interned only while capturing (see nvtx_ranges.h): otherwise the
// range is still pushed, so that pops pair up, but as an unnamed one.
uint32_t name_of(const char* s) { return capturing() ? intern_ascii(s) : 0; }
uint32_t name_of(const wchar_t* s) { return capturing() ? intern_wide(s) : 0; }
uint32_t name_of(const nvtxEventAttributes_t* a) { return capturing() ? message_id(a) : 0; }

// ---- CORE: the default domain ----
int RangePushA(const char* message) { return push_range(0, name_of(message)); }
int RangePushW(const wchar_t* message) { return push_range(0, name_of(message)); }
int RangePushEx(const nvtxEventAttributes_t* a) { return push_range(0, name_of(a)); }
int RangePop() { return pop_range(0); }
nvtxRangeId_t RangeStartA(const char* message) { return start_range(0, name_of(message)); }
nvtxRangeId_t RangeStartW(const wchar_t* message) { return start_range(0, name_of(message)); }
nvtxRangeId_t RangeStartEx(const nvtxEventAttributes_t* a) { return start_range(0, name_of(a)); }
void RangeEnd(nvtxRangeId_t id) { end_range(id); }

// ---- CORE2: domains and registered strings ----
int DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return push_range(domain_id(d), name_of(a));
}
int DomainRangePop(nvtxDomainHandle_t d) { return pop_range(domain_id(d)); }
nvtxRangeId_t DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return start_range(domain_id(d), name_of(a));
}
void DomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) { end_range(id); }
nvtxDomainHandle_t DomainCreateA(const char* name) { return domain_handle(name_of(name)); }
nvtxDomainHandle_t DomainCreateW(const wchar_t* name) { return domain_handle(name_of(name)); }
nvtxStringHandle_t DomainRegisterStringA(nvtxDomainHandle_t, const char* s) {
  return string_handle(name_of(s));
}
nvtxStringHandle_t DomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* s) {
  return string_handle(name_of(s));
}

struct Callback {
  unsigned id;
  NvtxFunctionPointer fn;
};

template <typename Fn>
NvtxFunctionPointer fp(Fn* fn) {
  return reinterpret_cast<NvtxFunctionPointer>(fn);
}

const Callback kCore[] = {
    {NVTX_CBID_CORE_RangePushA, fp(RangePushA)},     {NVTX_CBID_CORE_RangePushW, fp(RangePushW)},
    {NVTX_CBID_CORE_RangePushEx, fp(RangePushEx)},   {NVTX_CBID_CORE_RangePop, fp(RangePop)},
    {NVTX_CBID_CORE_RangeStartA, fp(RangeStartA)},   {NVTX_CBID_CORE_RangeStartW, fp(RangeStartW)},
    {NVTX_CBID_CORE_RangeStartEx, fp(RangeStartEx)}, {NVTX_CBID_CORE_RangeEnd, fp(RangeEnd)},
};

const Callback kCore2[] = {
    {NVTX_CBID_CORE2_DomainRangePushEx, fp(DomainRangePushEx)},
    {NVTX_CBID_CORE2_DomainRangePop, fp(DomainRangePop)},
    {NVTX_CBID_CORE2_DomainRangeStartEx, fp(DomainRangeStartEx)},
    {NVTX_CBID_CORE2_DomainRangeEnd, fp(DomainRangeEnd)},
    {NVTX_CBID_CORE2_DomainCreateA, fp(DomainCreateA)},
    {NVTX_CBID_CORE2_DomainCreateW, fp(DomainCreateW)},
    {NVTX_CBID_CORE2_DomainRegisterStringA, fp(DomainRegisterStringA)},
    {NVTX_CBID_CORE2_DomainRegisterStringW, fp(DomainRegisterStringW)},
};

// Writes our functions into one module's table; false if NVTX has no such module.
template <size_t N>
bool install(const NvtxExportTableCallbacks& etbl, NvtxCallbackModule module,
             const Callback (&callbacks)[N]) {
  NvtxFunctionTable table = nullptr;
  unsigned size = 0;  // entries, counting the unused id 0
  if (!etbl.GetModuleFunctionTable(module, &table, &size) || !table) return false;
  for (const Callback& c : callbacks)
    if (c.id < size && table[c.id]) *table[c.id] = c.fn;
  return true;
}

}  // namespace
}  // namespace ddpscope::inject::nvtx

// Returning 0 tells NVTX that no tool attached: it turns every NVTX call into a
// no-op, which is what DDPSCOPE_NVTX=0 (`record --no-nvtx`) asks for.
extern "C" int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table) {
  using namespace ddpscope::inject::nvtx;
  if (ddpscope::inject_option("DDPSCOPE_NVTX") == "0" || !get_export_table) return 0;
  auto* etbl = static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
  if (!etbl || etbl->struct_size < sizeof(NvtxExportTableCallbacks) ||
      !etbl->GetModuleFunctionTable)
    return 0;
  bool core = install(*etbl, NVTX_CB_MODULE_CORE, kCore);
  bool core2 = install(*etbl, NVTX_CB_MODULE_CORE2, kCore2);
  return core || core2;
}
