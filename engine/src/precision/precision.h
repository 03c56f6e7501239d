// The precision lab: what low-precision arithmetic does to a sum (the accumulation
// experiment) and what autocast makes of a model's tensors (the autocast inspector). Plain
// value types and the torch-free arithmetic; the runners (precision_runner.cpp) see LibTorch.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/observer.h"
#include "core/result.h"

namespace ts {

class ResultStore;

// The lab's id: the store's run kind.
inline constexpr const char* kPrecisionLab = "precision";

// ---- Accumulation -------------------------------------------------------------------------

// The number formats a sum is kept in. Rounding is to nearest, ties to even, with subnormals
// and overflow to infinity, as IEEE 754 (fp16), bfloat16 and c10::Half / c10::BFloat16 do.
enum class NumFormat { FP32, FP16, BF16 };
std::string_view toString(NumFormat f);  // "fp32", "fp16", "bf16"

// x rounded to the nearest value of `f` (from double: one rounding, as torch.tensor(0.01,
// dtype=...) does from a Python float).
double roundTo(double x, NumFormat f);
// The spacing of representable numbers of `f` at |x|: 2^(exponent(x) - mantissa bits), the
// subnormal spacing below the normal range.
double ulpOf(double x, NumFormat f);

// One of the course's sums: `count` times `s += addend`, with s kept in `accumulator` and the
// addend stored in `addend_format`. When the formats differ the addend is widened before the
// add: implicitly by type promotion (the course's third sum) or by an explicit cast (the fourth);
// both are the same arithmetic, which is the course's point.
struct AccumulationVariant {
    NumFormat accumulator = NumFormat::FP32;
    NumFormat addend_format = NumFormat::FP32;
    bool explicit_cast = false;
    std::string name() const;  // "fp32 += fp16 (cast)"
};

// The course's four (fp32, fp16, fp32 fed fp16, fp32 with a cast of fp16), and with `bf16`
// the same three low-precision ones in bf16.
std::vector<AccumulationVariant> accumulationVariants(bool fp16, bool bf16);

struct AccumulationSpec {
    double addend = 0.01;
    int64_t count = 1000;
    bool fp16 = true, bf16 = true;  // which low-precision formats besides fp32
    bool check_torch = true;        // the runner recomputes each sum with LibTorch tensors
};
inline constexpr int64_t kMaxAccumulationCount = 10'000'000;
inline constexpr int64_t kMaxRunningErrorPoints = 10'000;
std::vector<std::string> validateAccumulationSpec(const AccumulationSpec& spec);

struct AccumulationResult {
    AccumulationVariant variant;
    double addend = 0;         // as asked for
    double addend_stored = 0;  // as stored in the addend's format
    int64_t count = 0;
    double exact = 0;    // count × addend, in double
    double value = 0;    // the final sum
    double error = 0;    // value − exact
    double ulp_end = 0;  // ulp of the accumulator at the final sum
    // The first step (1-based) where the increment actually added differs from the addend as
    // fed (the add rounded), and where the sum stopped changing (stalled); 0: never.
    int64_t first_rounding_step = 0;
    int64_t first_stall_step = 0;
    double sum_at_stall = 0, ulp_at_stall = 0;
    // sum − step × addend after every `running_error_stride`-th step (every step up to
    // kMaxRunningErrorPoints steps; beyond, evenly thinned so that a stored run stays small).
    std::vector<double> running_error;
    int64_t running_error_stride = 1;
    // The same sum computed with LibTorch tensors (the course's script); NaN when not checked.
    double torch_value = std::numeric_limits<double>::quiet_NaN();
    bool torch_checked = false;
};

// The sum, computed here without LibTorch: each add is done in float and rounded to the
// accumulator's format, as c10::Half / c10::BFloat16 arithmetic does.
AccumulationResult accumulate(const AccumulationVariant& variant, double addend, int64_t count);

// ---- Autocast inspector ---------------------------------------------------------------------

// One recorded tensor flow: a module's (or a step's) name and the dtypes seen.
struct AutocastRecord {
    std::string name;          // "fc1", "relu", "ln", "fc2", "loss", "fc1.weight.grad", ...
    std::string kind;          // "linear", "relu", "layer_norm", "loss", "grad", "parameter"
    std::string param_dtype;   // the module's parameters' dtype ("" when it has none)
    std::string input_dtype;   // "" when not applicable
    std::string output_dtype;  // the result's dtype (a gradient's for kind "grad")
};

// One aten op seen while the inspector's model ran (see Note [computed in] in
// precision_runner.cpp): measured with a RecordFunction callback, not looked up in a policy table.
// Autocast's wrapper of an op it casts for casts the inputs and calls the op again, so such an op
// is seen nested in itself; the record is the pair, with the outer call's inputs (as the module
// passed them) and the inner call's (what the kernel got). An op autocast leaves alone is seen
// once.
struct AutocastOp {
    std::string name;  // "aten::linear", "aten::mm", "aten::native_layer_norm", ...
    std::string
        module;  // the module it ran inside: "fc1", "loss", "layer.0.attention.scores"; "" none
    std::string phase;  // "forward" (the forward and the loss) or "backward"
    int depth = 0;      // 0: called by the module's code; n: inside an op of depth n − 1
    std::vector<std::string> input_dtypes;  // its tensor inputs as called ("none": undefined)
    // The floating-point dtypes of the tensor inputs of the innermost call, the dtypes the
    // kernel computed in: "bf16", "fp32", or "bf16+fp32" for a mixed call (first input first);
    // "" when it had no floating-point input.
    std::string computed_dtype;
    std::string output_dtype;   // its first tensor output's dtype ("" none)
    bool cast = false;          // autocast cast its inputs and called it again
    std::string autograd_node;  // backward: the autograd node that ran it ("MmBackward0")
};

struct AutocastSpec {
    std::string model = "toy";  // "toy" or an LM size preset ("tiny", "small", ...)
    std::string device = "cpu";
    Precision dtype = Precision::BF16;                      // the autocast dtype (bf16 or fp16)
    int64_t in_features = 16, out_features = 4, batch = 8;  // the toy model
    int64_t context_length = 16;                            // the LM
    uint64_t seed = 0;
};
std::vector<std::string> validateAutocastSpec(const AutocastSpec& spec);
// An LM on the CPU that cannot fit the memory this process can get, refused with its estimate
// (the benchmark's: its weights and gradients and its largest tensor; "" when it fits, for the
// toy model and on a GPU, where an out-of-memory is the run's result).
std::string autocastHostMemoryProblem(const AutocastSpec& spec);

struct AutocastReport {
    AutocastSpec spec;
    std::vector<AutocastRecord> records;
    std::vector<AutocastOp> ops;  // in the order they started (empty in runs stored before them)
    Status status = Status::Ok;
    std::string error;
    // The record of that name, or nullptr.
    const AutocastRecord* find(std::string_view name) const;
    // The ops that belong under a module record: those whose module is its name, or (the LM,
    // recorded as one module "lm") whose module names no record other than "loss". Grad records
    // own none.
    std::vector<const AutocastOp*> opsOf(const AutocastRecord& record) const;
    // What a module computed in: the distinct computed dtypes of its forward ops of depth 0 that
    // compute (those with a floating-point input), in order, joined by ", "; "" when none.
    std::string computedIn(const AutocastRecord& record) const;
};

// ---- Training numerics ---------------------------------------------------------------------

// The toy model trained on one fixed batch (a random linear teacher's classes) for `steps`
// steps with AdamW, once per precision from the same weights and data: fp32, bf16 autocast,
// fp16 autocast with the dynamic loss scaler.
struct TrainNumericsSpec {
    std::vector<Precision> precisions{Precision::FP32, Precision::BF16, Precision::FP16};
    int steps = 50;
    double lr = 1e-2;
    double init_scale = 65536.0;  // the fp16 loss scaler's first scale (PyTorch's default)
    std::string device = "cpu";
    int64_t in_features = 16, out_features = 4, batch = 64;
    uint64_t seed = 0;
    // cudaProfilerStart/Stop around each precision's training steps (See Note [capture ranges],
    // runtime/step_ranges.h: they are all measured steps); NVTX ranges either way.
    bool cuda_profiler_range = false;
};
inline constexpr int kMaxTrainNumericsSteps = 100'000;
inline constexpr double kMaxInitialLossScale = 1e30;  // (the learning rate: kMaxLearningRate)
std::vector<std::string> validateTrainNumericsSpec(const TrainNumericsSpec& spec);

struct TrainNumericsStep {
    int step = 0;           // 1-based
    double loss = 0;        // unscaled, before the update
    double loss_scale = 0;  // the scale this step's backward used; 0 without a scaler
    bool skipped = false;   // the scaler found inf/NaN gradients and skipped the update
    // Gradient elements (unscaled) that are non-zero in fp32 but round to zero in fp16: what
    // fp16 gradients would lose without loss scaling.
    int64_t fp16_underflow = 0;
};

struct TrainNumericsCurve {
    Precision precision = Precision::FP32;
    Status status = Status::Ok;
    std::string error;
    int64_t grad_elements = 0;  // gradient elements per step (all parameters)
    std::vector<TrainNumericsStep> steps;
    int skippedSteps() const;
    double finalLoss() const;
};

// ---- Runs -----------------------------------------------------------------------------------

// One stored row of a precision run: an accumulation result or an autocast report.
struct PrecisionRow {
    std::optional<AccumulationResult> accumulation;
    std::optional<AutocastReport> autocast;
    std::optional<TrainNumericsCurve> train;
};

// Runs every variant; each result is stored (when a store is given) before it is returned.
std::vector<AccumulationResult> runAccumulation(const AccumulationSpec& spec, Observer& observer,
                                                ResultStore* store = nullptr, int64_t run_id = 0);
// Runs the model once (forward, loss, backward) under autocast and records the dtypes; stored
// as one row when a store is given. Throws std::invalid_argument for an invalid spec.
AutocastReport runAutocastInspector(const AutocastSpec& spec, Observer& observer,
                                    ResultStore* store = nullptr, int64_t run_id = 0);

// Trains once per precision; each curve is stored as a row before the next starts. Throws
// std::invalid_argument for an invalid spec.
std::vector<TrainNumericsCurve> runTrainNumerics(const TrainNumericsSpec& spec, Observer& observer,
                                                 const CancelToken& cancel,
                                                 ResultStore* store = nullptr, int64_t run_id = 0);

std::string trainNumericsSpecJson(const TrainNumericsSpec& spec);
std::string accumulationSpecJson(const AccumulationSpec& spec);
std::string autocastSpecJson(const AutocastSpec& spec);

}  // namespace ts
