// The planner lab: when data parallelism (DP), fully sharded data parallelism (FSDP), tensor
// parallelism (TP) and the 2-D mixes (DP × TP, FSDP × TP) become communication bound, from a
// device's FLOP/s C, its egress bandwidth W, the batch B (tokens), d_model D, d_ff F and the
// degrees; see Note [planner formulas] (planner.cpp) for every formula and where it comes from.
// Plain value types and the torch-free arithmetic; the runner (planner_runner.cpp) measures C
// and W on this machine with LibTorch.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/observer.h"

namespace ts {

class ResultStore;

// The lab's id: the store's run kind.
inline constexpr const char* kPlannerLab = "planner";

enum class Strategy { DP, FSDP, TP, DpTp, FsdpTp };
std::string_view toString(Strategy s);       // "dp", "fsdp", "tp", "dp-tp", "fsdp-tp"
std::string_view strategyTitle(Strategy s);  // "DP", "FSDP", "TP", "DP × TP", "FSDP × TP"
std::optional<Strategy> parseStrategy(std::string_view s);
const std::vector<Strategy>& allStrategies();

// What a plan is computed from. Units: FLOP/s, bytes/s, tokens, elements, bytes.
struct PlannerInputs {
    double flops = 0;         // C: one device's FLOP/s
    double bandwidth = 0;     // W: the bytes/s one device sends (egress)
    double batch_tokens = 0;  // B: tokens of one step, over all devices
    int64_t d_model = 0;      // D
    int64_t d_ff = 0;         // F (the course's D_FF)
    int64_t layers = 1;       // L
    int64_t dp = 1;           // X: devices along the data axis (DP, FSDP)
    int64_t tp = 1;           // Y: devices along the tensor axis
    double comm_bytes = 2;    // bytes of one communicated element (the course's fp16: 2)
    // Memory per parameter: weight, gradient, optimizer state (AdamW's two fp32 moments: 8).
    double param_bytes = 4, grad_bytes = 4, optimizer_bytes = 8;
    // 2-D: the collectives of the two axes overlap each other (time: the larger), or share
    // the links (time: the sum), as the course's fsdp_tp_calcs (c) and (d) ask.
    bool overlap_axes = true;
    // A model (a preset): D, F and L come from it, and predictStep() can predict its step.
    std::optional<ModelConfig> model;
};

inline constexpr int64_t kMaxPlannerDegree = 1'000'000;
inline constexpr int64_t kMaxPlannerDim = 10'000'000;

// Every problem, each a sentence naming the value ("C (FLOP/s) must be positive, got 0");
// empty when the inputs can be planned.
std::vector<std::string> validatePlannerInputs(const PlannerInputs& in);

// One pass (forward or backward) of one layer's MLP on one device.
struct PassCost {
    double flops = 0;                         // matmul FLOPs
    double comm_bytes = 0;                    // bytes the device sends
    double compute_s = 0;                     // flops / C
    double comm_s = 0;                        // the collectives' time (see overlap_axes)
    std::string flops_formula, comm_formula;  // the formulas, in the course's symbols
    bool commBound() const { return comm_s > compute_s; }
};

// A limit of a strategy: "N_DP ≤ 1 + B·W/C" and its value here; `holds` when the plan's
// degree (or batch) is within it.
struct PlannerLimit {
    std::string what;     // "largest N_DP (backward)"
    std::string formula;  // "N_DP ≤ 1 + B·W/C"
    double value = 0;
    bool holds = true;
    bool checked = true;  // false: a value to read (X_opt), not a limit to hold
};

struct StrategyPlan {
    Strategy strategy = Strategy::DP;
    int64_t x = 1, y = 1;        // the degrees it uses: data axis, tensor axis
    PassCost forward, backward;  // one layer
    // A step of L layers: all compute, all communication, and the step with each pass's
    // communication overlapped with its compute (Σ over passes of the larger).
    double step_compute_s = 0, step_comm_s = 0, step_s = 0;
    // What each device holds: the parameters (L layers' MLP, or the model's) and their bytes.
    double params_per_device = 0;
    double param_bytes = 0, grad_bytes = 0, optimizer_bytes = 0;
    std::string memory_formula;  // "P·(p + g + o) / X"
    bool comm_bound = false;     // either pass
    std::vector<PlannerLimit> limits;
    double x_opt = 0;  // FSDP × TP: the optimal data degree for N = X·Y (0 otherwise)
    double memoryBytes() const { return param_bytes + grad_bytes + optimizer_bytes; }
};

// The plan of one strategy. The inputs must be valid (validatePlannerInputs).
StrategyPlan planStrategy(const PlannerInputs& in, Strategy s);

// A ring collective of S bytes over N devices (the course's §8.1).
struct CollectiveCost {
    std::string name;     // "all-reduce (ring)"
    std::string formula;  // "2·(N−1)/N · S/W"
    double bytes_sent = 0, seconds = 0;
};
std::vector<CollectiveCost> ringCollectives(double bytes, int64_t n, double bandwidth);
// 2·(N−1)/N · S/W: the ring all-reduce's time.
double ringAllReduceSeconds(double bytes, int64_t n, double bandwidth);

// Compute and communication time of a strategy's binding pass against the per-device batch
// B/N (DP, FSDP and the 2-D mixes, at their degrees) or against the TP degree (TP, at B), and
// where they cross (the first x where communication stops exceeding compute, or the reverse).
struct PlannerCurve {
    Strategy strategy = Strategy::DP;
    std::string x_label;  // "tokens per device (B/N)" or "TP degree (N_TP)"
    std::string pass;     // "forward" or "backward"
    std::vector<double> x, compute_s, comm_s;
    std::optional<double> crossover;
    double crossover_s = 0;  // the time both take there
    double current_x = 0;    // where the inputs put it
    double current_compute_s = 0, current_comm_s = 0;
};
PlannerCurve planCurve(const PlannerInputs& in, Strategy s, int points = 96);

// A whole model's training step under DP or FSDP over X = dp devices, to compare with a
// measured distributed step: FLOPs from stepFlops() (the model's matmuls and attention), the
// gradients (DP) or weights and gradients (FSDP) of parameterCount() parameters moved in ring
// collectives of comm_bytes per element.
struct PlannerPrediction {
    Strategy strategy = Strategy::DP;
    int64_t devices = 1;
    std::string model;
    double parameters = 0;
    double tokens_per_device = 0;
    double forward_flops = 0, backward_flops = 0;  // per device
    double compute_s = 0;                          // both passes
    double forward_compute_s = 0, backward_compute_s = 0;
    double forward_comm_bytes = 0, backward_comm_bytes = 0;  // per device
    double forward_comm_s = 0, backward_comm_s = 0;
    double step_s = 0;         // each pass's communication overlapped with its compute
    double step_serial_s = 0;  // compute, then communication
    double memory_bytes = 0;   // weights, gradients, optimizer state per device
    std::string comm_formula;
    bool commBound() const {
        return forward_comm_s > forward_compute_s || backward_comm_s > backward_compute_s;
    }
};
// Throws std::invalid_argument without a model or for a strategy other than DP and FSDP.
PlannerPrediction predictStep(const PlannerInputs& in, Strategy s);

// ---- Measuring this machine (the runner, LibTorch) -------------------------------------------

struct MeasureSpec {
    std::string device = "cpu";  // "cpu" or "cuda"
    int64_t gemm_n = 0;  // the n of an n×n×n GEMM; 0: 8192 (bf16) on a GPU, 1024 (fp32) on the CPU
    int world = 0;       // ranks of the all-reduce; 0: every GPU, or 2 on the CPU
    int64_t allreduce_bytes = 0;  // 0: 256 MiB on GPUs, 16 MiB on the CPU
    int warmup = 2, iters = 5;
};
std::vector<std::string> validateMeasureSpec(const MeasureSpec& spec);

struct MachineMeasurement {
    std::string device;       // "cuda" or "cpu"
    std::string device_name;  // "NVIDIA H100 80GB HBM3"
    std::string gemm_dtype;   // "bf16" or "fp32"
    int64_t gemm_n = 0;
    double gemm_ms = 0;   // one GEMM, the mean of the timed ones
    double flops = 0;     // C: 2·n³ / time
    std::string backend;  // "nccl" or "gloo"
    int world = 0;
    int64_t allreduce_bytes = 0;
    std::string allreduce_dtype;
    double backend_ms = 0, backend_busbw = 0;  // the backend's all-reduce; busbw in bytes/s
    double ring_ms = 0, ring_busbw = 0;        // ours (distributed/ring_allreduce.h)
    bool ring_exact = false;                   // ours gave the backend's sum, bit for bit
    std::string note;  // what could not be measured, and why ("one device: ...")
    // W: the backend's bus bandwidth (0 when no all-reduce could be measured).
    double bandwidth() const { return backend_busbw; }
};

// Times the GEMM, then an all-reduce of `allreduce_bytes` over `world` ranks (threads of this
// process, one per GPU on NCCL, on Gloo on the CPU), the backend's and ours. Throws
// std::invalid_argument for a bad spec, std::runtime_error when a measurement fails.
MachineMeasurement measureMachine(const MeasureSpec& spec, Observer& observer,
                                  const CancelToken& cancel);

// ---- A run ---------------------------------------------------------------------------------

struct PlannerReport {
    PlannerInputs inputs;
    std::optional<MachineMeasurement> measured;
    std::vector<StrategyPlan> plans;             // every strategy
    std::vector<CollectiveCost> collectives;     // one layer's weights over N = X·Y devices
    double collective_bytes = 0;                 // S of those: 3·D·F·b
    std::vector<PlannerPrediction> predictions;  // DP and FSDP, with a model
};
// The inputs must be valid.
PlannerReport makePlannerReport(const PlannerInputs& in,
                                std::optional<MachineMeasurement> measured = {});

// A run: measures this machine first when `measure` is given (its C, and its W where one was
// measured, replace the inputs'), plans, and stores the report as one row when a store is
// given. Throws std::invalid_argument for inputs that are invalid (after the measurement),
// std::runtime_error when measuring or storing fails.
PlannerReport runPlanner(const PlannerInputs& in, const std::optional<MeasureSpec>& measure,
                         Observer& observer, const CancelToken& cancel,
                         ResultStore* store = nullptr, int64_t run_id = 0);

// Inputs with C and W filled from a measurement (C, and W unless none was measured); the
// caller's values stay where the measurement has none.
PlannerInputs withMeasurement(PlannerInputs in, const MachineMeasurement& m);

}  // namespace ts
