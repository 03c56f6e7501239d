// An NVTX injection library for the tests (NVTX_INJECTION64_PATH=libnvtx_recorder.so): what a
// tool such as Nsight Systems sees of a process's NVTX ranges, written down. Every range push
// and pop of the core API (ASCII and registered strings, any domain) becomes a line
// "THREAD push NAME" or "THREAD pop" in $TRAINSCOPE_NVTX_LOG/nvtx-PID.log, written at once
// (ranks leave by _exit). TrainScope's C++ (NVTX 3, header-only) and torch.cuda.nvtx both load
// it, with or without a GPU. See Note [capture ranges] (engine/src/runtime/step_ranges.h).
#include <fcntl.h>
#include <nvtx3/nvToolsExt.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

namespace {

std::mutex mutex;
int log_fd = -1;

void record(const char* what, const char* name) {
    if (log_fd < 0) return;
    std::string line = std::to_string(static_cast<long>(syscall(SYS_gettid))) + " " + what;
    if (name) line += std::string(" ") + name;
    line += "\n";
    std::lock_guard<std::mutex> lock(mutex);
    if (write(log_fd, line.data(), line.size()) < 0) return;
}

const char* messageOf(const nvtxEventAttributes_t* a) {
    if (!a) return "?";
    switch (a->messageType) {
        case NVTX_MESSAGE_TYPE_ASCII:
            return a->message.ascii;
        // A registered string's handle is the string itself (registerString below).
        case NVTX_MESSAGE_TYPE_REGISTERED:
            return reinterpret_cast<const char*>(a->message.registered);
        default:
            return "?";
    }
}

int pushA(const char* message) {
    record("push", message);
    return 0;
}
int pushEx(const nvtxEventAttributes_t* a) {
    record("push", messageOf(a));
    return 0;
}
int pop() {
    record("pop", nullptr);
    return 0;
}
int domainPushEx(nvtxDomainHandle_t, const nvtxEventAttributes_t* a) {
    record("push", messageOf(a));
    return 0;
}
int domainPop(nvtxDomainHandle_t) {
    record("pop", nullptr);
    return 0;
}
nvtxStringHandle_t registerString(nvtxDomainHandle_t, const char* s) {
    return reinterpret_cast<nvtxStringHandle_t>(strdup(s));
}

template <typename F>
void set(NvtxFunctionTable table, unsigned int size, unsigned int id, F f) {
    if (table && id < size && table[id]) *table[id] = reinterpret_cast<NvtxFunctionPointer>(f);
}

}  // namespace

extern "C" int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
    const char* dir = std::getenv("TRAINSCOPE_NVTX_LOG");
    if (!dir) return 0;
    const std::string path = std::string(dir) + "/nvtx-" + std::to_string(getpid()) + ".log";
    log_fd = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    const auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get(NVTX_ETID_CALLBACKS));
    if (!callbacks || log_fd < 0) return 0;
    NvtxFunctionTable core = nullptr, core2 = nullptr;
    unsigned int core_size = 0, core2_size = 0;
    if (!callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &core, &core_size) ||
        !callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &core2, &core2_size))
        return 0;
    set(core, core_size, NVTX_CBID_CORE_RangePushA, pushA);
    set(core, core_size, NVTX_CBID_CORE_RangePushEx, pushEx);
    set(core, core_size, NVTX_CBID_CORE_RangePop, pop);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePushEx, domainPushEx);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRangePop, domainPop);
    set(core2, core2_size, NVTX_CBID_CORE2_DomainRegisterStringA, registerString);
    return 1;
}
