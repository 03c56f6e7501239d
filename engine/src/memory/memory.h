// The memory lab: what a training step keeps on the GPU, moment by moment. A memory run is one
// or more benchmark points: warm-up steps, then K steps with the CUDA caching allocator's
// history on. The runner turns the allocator's trace into a torch-free RawMemoryTrace (every
// alloc and free with its phase, step, model range and op) plus the exact storage of the
// parameters, gradients and AdamW's state; analyzeMemory() gives the active-memory timeline,
// every live byte's category, the largest allocations and the peak explained. Plain value
// types, no LibTorch.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/observer.h"
#include "core/point.h"
#include "core/result.h"

namespace ts {

class ResultStore;

// The lab's id: the store's run kind.
inline constexpr const char* kMemoryLab = "memory";

// The OOM frontier: the largest context length or batch of a point that fits on the device.
enum class FrontierAxis { None, Context, Batch };
std::string_view toString(FrontierAxis a);  // "none", "context", "batch"
std::optional<FrontierAxis> parseFrontierAxis(std::string_view s);

struct MemorySpec {
    PointConfig bench;           // the point; its `steps` are not used, record_steps are
    int record_steps = 2;        // steps recorded, after bench.warmup unrecorded ones
    bool record_stacks = false;  // C++ stacks of every allocation (slow to symbolize)
    FrontierAxis frontier = FrontierAxis::None;
    int64_t frontier_max = 0;  // the bisection's upper end (0: kDefaultFrontierMax of the axis)
    // The file an imported snapshot came from (`memory import`, See Note [importing a
    // snapshot]); empty for a run TrainScope recorded. An imported run has no model: `bench` is
    // unused and the analytic model's predictions are left out.
    std::string imported;
    bool operator==(const MemorySpec&) const = default;
};
inline constexpr int kMaxRecordSteps = 100;
inline constexpr int64_t kDefaultContextFrontierMax = 131072;
inline constexpr int64_t kDefaultBatchFrontierMax = 4096;
// Every problem with the spec (the point's included); empty if valid.
std::vector<std::string> validateMemory(const MemorySpec& spec);

// ---- What the allocator recorded, torch-free (the runner fills it from the snapshot) ----

// The caching allocator's trace actions (c10's TraceEntry::Action, the names memory_viz reads).
enum class AllocAction { Alloc, FreeRequested, FreeCompleted, SegmentAlloc, SegmentFree, Oom };
std::string_view toString(AllocAction a);  // "alloc", "free_requested", ... "oom"
std::optional<AllocAction> parseAllocAction(std::string_view s);

struct StackFrame {
    std::string name, filename;
    int64_t line = 0;
    bool operator==(const StackFrame&) const = default;
};

// One trace entry. Names (range, op) are indices into RawMemoryTrace::names (-1: none); the
// stack an index into RawMemoryTrace::stacks (-1: not recorded).
struct AllocEvent {
    AllocAction action = AllocAction::Alloc;
    uint64_t addr = 0;    // for Oom: the device's free bytes, as the allocator reports it
    int64_t size = 0;     // bytes asked for (alloc, free); a segment's bytes (segment_*)
    int64_t time_ns = 0;  // from the first event of the trace
    uint64_t stream = 0;
    Phase phase = Phase::Other;
    int step = -1;       // 0-based over the recorded steps; -1 outside a step
    int32_t range = -1;  // the model's ranges around it: "layer.3/attention"
    int32_t op = -1;     // the innermost op or autograd node: "aten::mm", "MmBackward0"
    int32_t stack = -1;
    bool operator==(const AllocEvent&) const = default;
};

// A block that was live when recording started (the trace shows only what changed after);
// its size is the bytes asked for, as an alloc entry counts them.
struct LiveBlock {
    uint64_t addr = 0;
    int64_t size = 0;
    bool operator==(const LiveBlock&) const = default;
};

// The allocator's segments (cudaMalloc'd memory) when the trace was taken, for the snapshot.
struct SegmentBlock {
    uint64_t addr = 0;
    int64_t size = 0, requested = 0;
    bool allocated = false;
    bool operator==(const SegmentBlock&) const = default;
};
struct MemorySegment {
    uint64_t addr = 0;
    int64_t total_size = 0;
    uint64_t stream = 0;
    bool large = true;
    std::vector<SegmentBlock> blocks;
    bool operator==(const MemorySegment&) const = default;
};

// Every live byte falls in one category. The first three we know exactly (we own the model
// and the optimizer); the rest by phase and lifetime (see Note [categories]).
enum class MemoryCategory {
    Parameters,
    Gradients,
    OptimizerState,
    Activations,
    Temporaries,
    Other
};
inline constexpr size_t kMemoryCategories = 6;
std::string_view toString(MemoryCategory c);  // "parameters", "gradients", "optimizer state", ...
const std::vector<MemoryCategory>& allMemoryCategories();

// A tensor's storage the runner knows: a parameter, a gradient (of one recorded step: set to
// none before the next) or optimizer state. Bytes are the storage's, exactly.
struct KnownStorage {
    uint64_t addr = 0;
    int64_t bytes = 0;
    MemoryCategory category = MemoryCategory::Other;
    int step = -1;  // gradients: the recorded step whose backward made them; else -1
    bool operator==(const KnownStorage&) const = default;
};

// The driver's view of the device (NVML's used memory), sampled at every phase boundary.
struct DriverSample {
    int64_t time_ns = 0;  // on the trace's clock
    int64_t used_bytes = 0;
    bool operator==(const DriverSample&) const = default;
};

struct RawMemoryTrace {
    std::vector<AllocEvent> events;
    std::vector<std::string> names;               // ranges and ops
    std::vector<std::vector<StackFrame>> stacks;  // innermost frame first
    std::vector<LiveBlock> initial;               // live when recording started
    int64_t initial_reserved = 0;                 // reserved bytes then
    std::vector<MemorySegment> segments;          // at the end
    std::vector<KnownStorage> known;
    std::vector<DriverSample> driver;
    int device = 0;
    // The category the trace itself gives each event's block (an imported snapshot's, See Note
    // [importing a snapshot]): empty, or one per event, a MemoryCategory's value or -1 where
    // the rules decide (See Note [categories]).
    std::vector<int8_t> given_categories;
    bool operator==(const RawMemoryTrace&) const = default;
};

// ---- The analysis ----

// Note [categories]: a block whose address holds a parameter, AdamW state or (in the step
// that made it) a gradient has that category. Any other block made in forward and freed in
// backward, or still live when backward starts and freed during it, was saved for backward:
// activations. A block made and freed inside one phase is a temporary. What is left (the
// batch, the RoPE tables, the loss, blocks live before recording) is other. In a trace that
// ends in an out-of-memory during backward (a frontier probe's), a block forward made in that
// step and still held at the failure counts as an activation too.
// `alloc_index` is the alloc event's index; `free_index` its free_completed's (none: still live).
MemoryCategory categorizeAllocation(const RawMemoryTrace& t, size_t alloc_index,
                                    std::optional<size_t> free_index);

// One allocation's life in the trace.
struct Allocation {
    size_t alloc_index = 0;  // into events (for a block live at the start: none, see initial)
    std::optional<size_t> free_index;  // the free_completed event; none: live at the end
    bool initial = false;              // live before recording (alloc_index is then 0)
    uint64_t addr = 0;
    int64_t size = 0;
    MemoryCategory category = MemoryCategory::Other;
    Phase phase = Phase::Other;  // of its allocation
    int step = -1;
    int32_t range = -1, op = -1, stack = -1;
};

// The timeline: one point after every event that changes allocated or reserved bytes.
struct TimelinePoint {
    size_t index = 0;  // the event's index
    int64_t time_ns = 0;
    int64_t allocated = 0, reserved = 0;
    std::array<int64_t, kMemoryCategories> by_category{};
};

// A stretch of events of one phase of one step: the bands behind the timeline.
struct PhaseBand {
    Phase phase = Phase::Other;
    int step = -1;
    size_t first = 0, last = 0;  // event indices, inclusive
};

struct PeakBreakdown {
    size_t index = 0;  // the event after which allocated bytes peaked
    int64_t time_ns = 0;
    Phase phase = Phase::Other;
    int step = -1;
    int64_t allocated = 0, reserved = 0;
    std::array<int64_t, kMemoryCategories> by_category{};
    std::vector<size_t>
        live;  // indices into MemoryAnalysis::allocations live at the peak, largest first
};

struct MemoryAnalysis {
    std::vector<Allocation> allocations;  // initial blocks first, then in the order allocated
    std::vector<TimelinePoint> timeline;
    std::vector<PhaseBand> bands;
    PeakBreakdown peak;
    std::vector<std::pair<size_t, int64_t>>
        driver;  // (event index, used bytes) of each driver sample
};
MemoryAnalysis analyzeMemory(const RawMemoryTrace& t);

// Where an allocation was asked for: the innermost frame of its stack as
// "cs336_basics/model.py:12 (fn)" (the file's folder and name)
// (for the user's code, their own line: the runner keeps only their frames); "" without one.
std::string allocationSite(const RawMemoryTrace& t, int32_t stack);

// The largest allocations of the trace (initial blocks left out), largest first; ties by order.
std::vector<size_t> largestAllocations(const MemoryAnalysis& a, size_t count);

// ---- The analytic model of a step's memory ----
// Note [memory model]: P parameters in fp32 (4P bytes) whatever the precision (autocast casts
// on the fly); gradients 4P in every mode that runs backward; AdamW's two moments 8P plus one
// fp32 step counter per parameter tensor (6 per layer + 3) in train mode. Activations saved
// for backward (not in forward mode), per layer, with s the compute precision's bytes (4, or
// 2 under autocast), f = 4, B batch, T context, d model width, F d_ff, H heads: the two
// RMSNorms' inputs (2·BTd·f) and outputs, the linears' inputs (2·BTd·s), q, k, v (3·BTd·s),
// the attention's output (BTd·s), SwiGLU's w1/w3 outputs (2·BTF·s), its silu (BTF·s) and
// product (BTF·s); attention that materialises the scores (naive, tiled, sdpa-math) adds the
// softmax (BHT²·f) and, below fp32, its cast (BHT²·s); fused attention its log-sum-exp
// (BHT·f). After the layers: the final norm's input and output (BTd·(f+s)) and the loss's
// fp32 log-softmax (BTV·f). Under autocast the half copies of the matrices (2·(L·(4d²+3dF) +
// Vd)) are saved for backward too: counted with the activations. Temporaries: the largest
// transient, the logits with their fp32 log-softmax (BTV·(s+f)) or one layer's scores and
// softmax (BHT²·(f+s)). The peak is the sum, an upper estimate: backward frees activations as
// it makes gradients. Under checkpointing (see Note [activation checkpointing], core/point.h) the
// blocks keep only their segments' inputs (⌈L/k⌉·BTd·f, the fp32 residual stream) and one
// segment of k blocks is recomputed at a time (k layers' activations); nested checkpoints keep
// about ⌈log₂L⌉ + 1 inputs and one layer's activations.
struct MemoryPrediction {
    int64_t parameters = 0, gradients = 0, optimizer_state = 0;
    int64_t activations = 0;  // saved for backward (0 in forward mode)
    int64_t activations_per_layer = 0;
    int64_t weight_casts = 0;  // autocast's half copies of the weights
    int64_t temporaries = 0;   // the largest transient: the logits' gradient or a layer's scores
    int64_t peak = 0;          // the sum: an estimate of the step's peak
    std::array<int64_t, kMemoryCategories> by_category{};  // weight casts counted as temporaries
};
MemoryPrediction predictMemory(const PointConfig& cfg);
// Parameter tensors of the model: 6 per layer (two norms, qkv, o, w13, w2) + 3.
int64_t parameterTensorCount(const ModelConfig& m);

// ---- The OOM frontier ----
struct FrontierProbe {
    int64_t value = 0;
    bool fits = false;
    Status status = Status::Ok;  // OOM is the expected "does not fit"
    int64_t peak_bytes = 0;
    std::string error;
    bool operator==(const FrontierProbe&) const = default;
};
struct FrontierResult {
    FrontierAxis axis = FrontierAxis::None;
    int64_t lo = 0, hi = 0, granule = 1;
    int64_t largest_fit = 0;            // 0: not even lo fits
    int64_t smallest_oom = 0;           // 0: hi fits
    std::vector<FrontierProbe> probes;  // in the order run
    // The allocator's history of the probe at smallest_oom, from its model's construction up
    // to the allocation that failed (the trace's last oom entry), with the segments as they
    // were at that moment: the snapshot at the failure (the runner's out-of-memory observer
    // takes it before anything is freed).
    std::optional<RawMemoryTrace> oom_trace;
    bool operator==(const FrontierResult&) const = default;
};

// The allocation an out-of-memory refused: the trace's last oom entry, with what the
// allocator held when it failed.
struct FailedAllocation {
    size_t index = 0;         // the oom event
    int64_t requested = 0;    // bytes asked for
    int64_t device_free = 0;  // the device's free bytes, as the allocator saw them
    Phase phase = Phase::Other;
    int step = -1;
    std::string range, op;
    int64_t allocated = 0, reserved = 0;  // the allocator's, just before
    std::array<int64_t, kMemoryCategories> by_category{};
};
std::optional<FailedAllocation> failedAllocation(const RawMemoryTrace& t, const MemoryAnalysis& a);
// Bisection over multiples of `granule` in [lo, hi] for the largest value that fits, taking
// `fits` as monotonic (what fits at n fits below n). A probe that fails for another reason
// than memory stops the search (its probe says why). The probe's fits flag is the answer.
FrontierResult findFrontier(FrontierAxis axis, int64_t lo, int64_t hi, int64_t granule,
                            const std::function<FrontierProbe(int64_t)>& probe);

// ---- The result ----
struct MemoryResult {
    MemorySpec spec;
    Status status = Status::Ok;
    std::string error;
    int64_t oom_bytes = 0;
    bool gpu = false;
    int64_t parameter_count = 0;
    // Exact bytes of the model's and optimizer's tensors at the end of the run (storage nbytes).
    int64_t parameter_bytes = 0, gradient_bytes = 0, optimizer_bytes = 0;
    std::vector<StepSample> steps;  // warm-up, then recorded
    RawMemoryTrace trace;
    std::optional<FrontierResult> frontier;
    Environment environment;
};

// Measured against predicted, per category (measured: at the peak).
struct CategoryComparison {
    MemoryCategory category = MemoryCategory::Other;
    int64_t measured = 0, predicted = 0;
};
std::vector<CategoryComparison> compareWithPrediction(const MemoryResult& r,
                                                      const MemoryAnalysis& a);

// The highest moment of each phase (over the recorded steps) with its categories: the
// comparison of two runs phase by phase. `present` is false for a phase the run does not have
// (forward mode has no backward).
struct PhasePeak {
    Phase phase = Phase::Other;
    bool present = false;
    int step = -1;
    size_t index = 0;  // the event
    int64_t allocated = 0;
    std::array<int64_t, kMemoryCategories> by_category{};
};
// Forward, backward, optimizer, then the step's overall peak (phase Other: "step").
std::vector<PhasePeak> phasePeaks(const RawMemoryTrace& t, const MemoryAnalysis& a);

// Two runs phase by phase: per phase (forward, backward, optimizer, then the step's peak) one
// row per category and a total, A's and B's bytes at that phase's highest moment and B's
// difference's share of the phase's total difference (what B saves, attributed).
struct PhaseComparisonRow {
    Phase phase = Phase::Other;                 // Other: the step's overall peak
    std::optional<MemoryCategory> category;     // none: the phase's total
    bool a_present = false, b_present = false;  // the run has the phase
    int64_t a = 0, b = 0;
    std::optional<double> share;  // of the phase's B - A (categories, both present, B != A)
};
std::vector<PhaseComparisonRow> comparePhases(const RawMemoryTrace& ta, const MemoryAnalysis& aa,
                                              const RawMemoryTrace& tb, const MemoryAnalysis& ab);
// "forward", "backward", "optimizer", "step (peak)"
std::string phaseComparisonName(Phase p);

// Note [importing a snapshot]: `memory import` reads the pickle torch.cuda.memory._dump_snapshot
// writes (the dict torch.cuda.memory._snapshot() returns: "segments", and "device_traces", a
// list of trace entries per device with "action", "addr", "size", "stream", "time_us",
// "frames") into a MemoryResult, so that every pane of the lab serves it. The device is the one
// with the most entries. The actions are c10's (alloc, free_requested, free_completed,
// segment_alloc, segment_free, oom; segment_map and segment_unmap of expandable segments count
// as segment_alloc and segment_free; "snapshot" and others are left out). Frames are the stack,
// innermost first, except TrainScope's own markers (its snapshots' "trainscope/op", ".../range",
// ".../phase" frames), which give back the op, range, phase and step; so does TrainScope's
// runner's user metadata ("phase|step|module"). A block's category is the entry's "category"
// where it names one (TrainScope's names, or PyTorch's memory profiler's: PARAMETER, GRADIENT,
// ACTIVATION, TEMPORARY, OPTIMIZER_STATE; INPUT, AUTOGRAD_DETAIL and unknown ones are "other");
// with none, a block whose phase is known is judged by its phases (See Note [categories]), and
// one whose phase is not is "other" (nothing says what it was). Blocks live in the segments at the
// end that the trace never allocated, and blocks the trace frees before allocating, were live
// before it began (initial). A file that is not such a pickle, or a snapshot with neither trace
// entries nor segments, is refused with std::invalid_argument saying why.
MemoryResult importMemorySnapshot(std::string_view bytes, const std::string& file);

class MemoryObserver : public Observer {
public:
    virtual void pointStarted(int /*index*/, int /*count*/, const PointConfig& /*config*/) {}
    // Every step, warm-up (unrecorded) ones included.
    virtual void stepFinished(const StepSample& /*sample*/) {}
    // The recorded steps are done and the allocator's trace is being read.
    virtual void traceCollected() {}
    virtual void frontierProbed(const FrontierProbe& /*probe*/) {}
    virtual void pointFinished(int /*index*/, const MemoryResult& /*result*/) {}
};

// Runs one point. Never throws for a run-time failure: an OOM is status OOM, a CPU device is
// status Failed ("memory recording needs a CUDA device"). When `store` is given the result is
// stored as row `index` of `run_id` before pointFinished.
MemoryResult runMemory(const MemorySpec& spec, MemoryObserver& observer, const CancelToken& cancel,
                       ResultStore* store = nullptr, int64_t run_id = 0, int index = 0,
                       int count = 1);

}  // namespace ts
