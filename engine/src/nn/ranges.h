// The ranges that name the parts of a training step (see Note [profiler ranges] in model.cpp).
// TS_RANGE("forward") opens, until the end of the enclosing block, both a RecordFunction user
// scope (what LibTorch's profiler, and so the profiler lab, sees) and an NVTX range (what
// `nsys profile -t cuda,nvtx` and `ncu --nvtx` see). With neither tool listening, the first
// is a thread-local check and the second a call through an unset function pointer.
#pragma once

#include <ATen/record_function.h>

#include <string>

#if defined(TRAINSCOPE_NVTX)
#include <nvtx3/nvToolsExt.h>
#endif

namespace ts {

class NvtxRange {
public:
#if defined(TRAINSCOPE_NVTX)
    explicit NvtxRange(const char* name) { nvtxRangePushA(name); }
    explicit NvtxRange(const std::string& name) : NvtxRange(name.c_str()) {}
    ~NvtxRange() { nvtxRangePop(); }
#else
    explicit NvtxRange(const char*) {}
    explicit NvtxRange(const std::string&) {}
#endif
    NvtxRange(const NvtxRange&) = delete;
    NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace ts

#define TS_RANGE_CAT2(a, b) a##b
#define TS_RANGE_CAT(a, b) TS_RANGE_CAT2(a, b)
// One per block (RecordFunction's guard has a fixed name).
#define TS_RANGE(name)       \
    RECORD_USER_SCOPE(name); \
    ::ts::NvtxRange TS_RANGE_CAT(ts_nvtx_range_, __LINE__)(name)
