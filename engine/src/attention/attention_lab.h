// The attention lab: implementation × sequence length × head dim × dtype × causal ×
// batch/heads, timing forward and backward and recording memory. Each implementation is
// checked against a float64 reference on the same inputs before it is timed. Its spec, its
// cells (results), its observer and its runner. Plain value types, no LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/observer.h"
#include "core/result.h"

namespace ts {

class ResultStore;

// The lab's id: the store's run kind, the window's and the presets' name for it.
inline constexpr const char* kAttentionLab = "attention";

enum class AttentionPass { Forward, Backward, ForwardBackward };
std::string_view toString(AttentionPass p);  // "forward", "backward", "forward-backward"
std::optional<AttentionPass> parseAttentionPass(std::string_view s);
const std::vector<AttentionPass>& allAttentionPasses();

// Note [attention in Python]: implementations that live in Python run in the Python runner
// (runner/trainscope_runner/attention.py), one process for all their cells after the built-in
// ones: "torch-compile" (torch.compile of the naive attention), and the user's own attention
// from --code: "yours-pytorch" and "yours-triton" (a course checkout's or an adapters module's
// get_flashattention_autograd_function_pytorch / _triton), "yours" (module:Name, an
// autograd.Function or a callable (q, k, v, is_causal) -> o). The user's function gets the
// course's layout, (batch·heads, seq, head dim). Each passes the same float64 gate as ours
// before it is timed; an adapter that raises NotImplementedError is "not done yet", not a
// failure.
const std::vector<std::string>& pythonAttentionImpls();  // torch-compile, yours-pytorch, ...
bool isPythonAttentionImpl(std::string_view name);
// The user's implementations --code names when no yours-* is asked for: a checkout or an
// adapters module gives yours-pytorch and yours-triton, module:Name gives yours.
std::vector<std::string> defaultUserAttentionImpls(const std::string& code);

struct AttentionBenchSpec {
    std::vector<AttentionImpl> impls{AttentionImpl::Naive, AttentionImpl::Flash};
    // See Note [attention in Python]: run after the built-in ones, problem by problem.
    std::vector<std::string> python_impls;
    std::string code;    // --code: where the user's attention is (yours-*)
    std::string python;  // the interpreter; empty: the default (runtime/python_runner.h)
    std::vector<int64_t> seq_lens{1024};
    std::vector<int64_t> head_dims{64};
    std::vector<Precision> dtypes{Precision::BF16};
    std::vector<bool> causal{true};
    std::vector<int64_t> batches{1};
    std::vector<int64_t> heads{1};
    std::vector<AttentionPass> passes{AttentionPass::Forward, AttentionPass::Backward};
    int warmup = 3;
    int steps = 10;
    std::string device = "cuda";
    uint64_t seed = 0;
    bool check = true;  // correctness check before timing (a failing cell is not timed)
    // cudaProfilerStart/Stop around each cell's measured steps (See Note [capture ranges],
    // runtime/step_ranges.h); NVTX ranges "warmup", "measured" and "step N" either way.
    bool cuda_profiler_range = false;
};

// The course's two set-ups. "a": batch 8, one head, d 16…128, seq 256…16384, fp32, not
// causal, forward and backward with the memory in use before backward. "b": batch 1, one
// head, causal, seq 128…65536, d 16…128, bf16 and fp32, forward, backward and both.
std::optional<AttentionBenchSpec> attentionPreset(std::string_view name);

// Limits named in the messages that refuse a spec beyond them.
inline constexpr int kMaxAttentionSteps = 1'000'000;
inline constexpr size_t kMaxAttentionCells = 10'000;
inline constexpr double kMaxAttentionTensorBytes = 1099511627776.0;  // 2^40

// Every problem with a spec, each naming the bad value; empty if valid. Does not check the
// machine: checkAttentionRunnable() does.
std::vector<std::string> validateAttentionSpec(const AttentionBenchSpec& spec);
// Why this machine cannot run the spec (runtime/environment.h), empty if it can.
std::vector<std::string> checkAttentionRunnable(const AttentionBenchSpec& spec);

struct AttentionCell {
    AttentionImpl impl = AttentionImpl::Naive;
    std::string python_impl;  // set for an implementation run in Python (then impl is unused)
    int64_t batch = 1, heads = 1, seq = 0, head_dim = 0;
    Precision dtype = Precision::FP32;
    bool causal = false;
    Status status = Status::Ok;
    std::string error;  // why OOM / failed / unsupported
    // Correctness against the float64 reference (relative Frobenius error on checked slices);
    // negative when not checked.
    double err_out = -1, err_grad = -1, tolerance = 0;
    // Medians over the measured steps, ms; 0 when not measured.
    double forward_ms = 0, backward_ms = 0, forward_backward_ms = 0;
    double forward_tflops = 0, backward_tflops = 0, forward_backward_tflops = 0;
    // Means and standard deviations over the same steps; 0 when not measured.
    double forward_mean_ms = 0, forward_std_ms = 0, backward_mean_ms = 0, backward_std_ms = 0,
           forward_backward_mean_ms = 0, forward_backward_std_ms = 0;
    // The first warm-up call's forward (torch.compile's and Triton's compile in it); 0: not
    // measured.
    double first_call_ms = 0;
    int64_t memory_before_backward = 0;  // bytes allocated after forward (0 on the CPU)
    int64_t peak_memory = 0;             // peak bytes allocated during the measured steps
    std::string traceback;               // the user's traceback, for a cell of their code
};

// The cell's implementation by name: "flash", "torch-compile", "yours-pytorch".
std::string implName(const AttentionCell& c);

// 4·b·h·s_q·s_k·d, halved when causal; backward 2.5×, forward+backward 3.5×.
double attentionFlops(int64_t batch, int64_t heads, int64_t seq, int64_t head_dim, bool causal,
                      AttentionPass pass);

class AttentionObserver : public Observer {
public:
    virtual void cellStarted(int /*index*/, int /*count*/, const AttentionCell& /*cell*/) {}
    // A cell is done (whatever its status); it has been stored when a store is in use.
    virtual void cellFinished(int /*index*/, int /*count*/, const AttentionCell& /*cell*/) {}
};

struct AttentionBenchResult {
    std::vector<AttentionCell> cells;
    Environment environment;
    bool cancelled = false;
    std::string store_error;  // set when a cell could not be stored: the run stopped there
};

// The number of cells the spec asks for.
size_t attentionCellCount(const AttentionBenchSpec& spec);

// Runs every cell of the spec in order (problems outermost, implementations innermost). An
// out-of-memory cell is marked OOM and the sweep goes on; cancel() stops within one step.
// Each finished cell goes to `store` (when given, under `run_id`) before the observer hears
// of it. Throws std::invalid_argument for an invalid spec.
AttentionBenchResult runAttentionBench(const AttentionBenchSpec& spec, AttentionObserver& observer,
                                       const CancelToken& cancel, ResultStore* store = nullptr,
                                       int64_t run_id = 0);

// The run as asked for, stored with it.
std::string attentionSpecJson(const AttentionBenchSpec& spec);

}  // namespace ts
