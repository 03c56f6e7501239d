// The profiler lab: where the time of a training step goes, op by op and kernel by kernel,
// phase by phase. A profiling run is one benchmark point: warm-up steps unprofiled, then K
// steps under LibTorch's Kineto profiler. What the profiler recorded becomes a RawTrace; the
// pure attribute() gives every op and kernel its phase (forward, backward, optimizer) and its
// range inside the model ("layer.3/attention/softmax"); the tables below are computed from
// that. Plain value types, no LibTorch.
#pragma once

#include <cstdint>
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
inline constexpr const char* kProfileLab = "profile";

struct ProfileSpec {
    PointConfig bench;      // the point; its `steps` are not used, profile_steps are
    int profile_steps = 3;  // steps run under the profiler, after bench.warmup unprofiled ones
    // The file an imported trace came from (`profile import`, See Note [importing a trace]);
    // empty for a profile TrainScope ran. An imported profile has no model: `bench` is unused
    // and what is computed from the model (FLOPs, the attention parts) is left out.
    std::string imported;
    bool operator==(const ProfileSpec&) const = default;
};
inline constexpr int kMaxProfileSteps = 1000;
// Every problem with the spec (the point's included); empty if valid.
std::vector<std::string> validateProfile(const ProfileSpec& spec);

// ---- What the profiler recorded, torch-free (the runner fills it from Kineto's events) ----

// A CPU event on one thread: an op (aten::mm, cudaLaunchKernel) or a named range
// (RecordFunction user scope: "forward", "layer.0", "attention"). Events of one thread nest.
struct CpuEvent {
    std::string name;
    uint64_t thread = 0;
    int64_t start_ns = 0, end_ns = 0;
    bool range = false;
    uint64_t correlation = 0;          // the op's id; a kernel names its launching op by it
    uint64_t runtime_correlation = 0;  // a CUDA runtime call's (cudaLaunchKernel) CUPTI id
    int64_t sequence_nr = -1;          // autograd: a forward op and its backward node share it...
    uint64_t fwd_thread = 0;           // ...and the backward node names the forward op's thread
    std::vector<std::vector<int64_t>> shapes;  // input shapes (when recorded)
};

// Something that ran on the GPU: a kernel, a memcpy or a memset.
struct KernelEvent {
    std::string name;
    int64_t start_ns = 0, duration_ns = 0;
    uint64_t launcher = 0;     // correlation of the CPU op that launched it (0: unknown)
    uint64_t correlation = 0;  // CUPTI's: the runtime call that launched it has the same
    int64_t stream = 0;
};

struct RawTrace {
    std::vector<CpuEvent> cpu;
    std::vector<KernelEvent> kernels;
};

// ---- Attributed events: the stored form of a profile ----

struct ProfiledRange {
    std::string name;
    uint64_t thread = 0;
    int64_t start_ns = 0, end_ns = 0;
};

struct ProfiledOp {
    std::string name;
    uint64_t thread = 0;
    int64_t start_ns = 0, end_ns = 0;
    int64_t self_ns = 0;    // its time less its children's
    int64_t device_ns = 0;  // kernels it or its children launched
    Phase phase = Phase::Other;
    std::string range;       // model ranges, outermost first: "layer.0/attention/scores"
    double flops = 0;        // matmuls (aten::mm, addmm, bmm, baddbmm) from input shapes
    std::string shapes;      // "[[8, 64], [64, 192]]"
    bool top_level = false;  // not inside another op
};

struct ProfiledKernel {
    std::string name;
    int64_t start_ns = 0, duration_ns = 0;
    int64_t stream = 0;
    Phase phase = Phase::Other;
    std::string range;
    std::string op;  // the launching op's name (empty when unknown)
};

struct AttributedTrace {
    std::vector<ProfiledRange> ranges;
    std::vector<ProfiledOp> ops;
    std::vector<ProfiledKernel> kernels;
};

// Note [attribution]: an op's phase is the innermost phase range around it on its own thread.
// Autograd runs backward ops on its own threads (one per device), where no phase range is:
// those take the phase whose range (on any thread) holds the op's start, so a kernel launched
// from autograd's thread while the main thread sits in "backward" belongs to backward. An op's
// range is the path of model ranges around it on its thread; a backward op has none there, so
// it takes the range of its forward op (same sequence number on the forward thread). A kernel
// takes the phase and range of the op that launched it (Kineto's correlation id); a kernel
// launched outside any op (our FlashAttention kernels, called from C++) takes those of the CUDA
// runtime call that launched it (CUPTI's correlation id), which lies inside the ranges.
AttributedTrace attribute(const RawTrace& trace);

// Note [a graph's kernels named by its capture]: compiled mode replays each phase as one CUDA
// graph, one cudaGraphLaunch on the host; Kineto links every kernel of the replay to that call,
// inside the phase range around it, so a kernel's phase is known but not its op or model range.
// The capture ran the phase's host code once with the profiler on: each call that made a node
// of the graph (a kernel launch, runtime or driver API, a memset, a memcpy), in order, inside its
// ops and ranges, attributed as an eager kernel is (graphCaptureLaunches). A graph captured on
// one stream is a chain that replays its nodes in the order they were captured, so the i-th
// kernel of a phase's replay is the i-th node-making call of that phase's capture
// (nameGraphKernels). Where the counts of a phase disagree (a replay with a kernel the capture
// did not see), or where the GEMM kernels would be named by calls that are not GEMM ops, the
// phase's kernels keep the phase alone: a wrong name is worse than none.

// The node-making calls of a capture's trace, as kernels (name: the call, start: its start),
// each with the phase, range and op the attribution gives it; by start.
std::vector<ProfiledKernel> graphCaptureLaunches(const RawTrace& capture);

struct GraphNaming {
    int64_t replayed = 0;               // kernels of graph replays (launched by cudaGraphLaunch)
    int64_t named = 0;                  // of those, named by the capture
    std::vector<std::string> problems;  // per phase left unnamed: why
};
// Gives each replayed kernel of `replay` the range and op of its capture launch.
GraphNaming nameGraphKernels(AttributedTrace& replay, const std::vector<ProfiledKernel>& launches);

// FLOPs of a matmul op from its input shapes (2·M·K·N per product), 0 when not a matmul or
// the shapes do not say.
double matmulFlops(std::string_view op, const std::vector<std::vector<int64_t>>& shapes);

// ---- Categories: a rule on the name, for kernels and (on the CPU) ops ----
enum class Category {
    Gemm,
    Attention,
    Elementwise,
    Normalization,
    ReductionSoftmax,
    Optimizer,
    Memory,
    Other
};
std::string_view toString(Category c);  // "GEMM", "attention", "element-wise", "normalisation", ...
const std::vector<Category>& allCategories();
Category categorize(std::string_view name);

// ---- The profile ----
struct ProfileResult {
    ProfileSpec spec;
    Status status = Status::Ok;
    std::string error;
    int64_t oom_bytes = 0;
    bool gpu = false;               // kernels were recorded (a CUDA device)
    std::vector<StepSample> steps;  // warm-up, then profiled (CUDA-event phase times)
    AttributedTrace trace;          // of the profiled steps
    // Compiled mode: the graphs' replayed kernels and how many the capture named (See Note [a
    // graph's kernels named by its capture]); 0 and 0 otherwise.
    int64_t graph_kernels = 0, graph_kernels_named = 0;
    Environment environment;
};

// Which events a table takes: a phase (none: the whole step) and a range (empty: all; else
// any component of the event's range path, "attention" or "layer.0").
struct EventFilter {
    std::optional<Phase> phase;
    std::string range;
};
bool matches(const EventFilter& f, Phase phase, const std::string& range);

// Like `nsys stats`' CUDA GPU kernel summary; sorted by total time, descending.
struct KernelRow {
    std::string name;
    Category category = Category::Other;
    double percent = 0;  // of the filtered kernels' total time
    double total_us = 0;
    int64_t instances = 0;
    double avg_us = 0, median_us = 0, min_us = 0, max_us = 0, std_us = 0;
};
std::vector<KernelRow> kernelTable(const std::vector<ProfiledKernel>& kernels,
                                   const EventFilter& filter);

// Like key_averages(): per op name; sorted by device time, then self CPU time, descending.
struct OpRow {
    std::string name;
    int64_t calls = 0;
    double cpu_self_us = 0, cpu_total_us = 0, device_us = 0;
    double flops = 0;    // summed over calls
    double tflops = 0;   // flops / device time (on the CPU: / CPU total time); 0 without flops
    std::string shapes;  // of the first call
};
std::vector<OpRow> opTable(const std::vector<ProfiledOp>& ops, const EventFilter& filter, bool gpu);

// Time per category of one phase: kernel time on a GPU, ops' self CPU time on the CPU.
struct CategoryRow {
    Phase phase = Phase::Other;
    Category category = Category::Other;
    double time_us = 0;
    double share = 0;  // of the phase's time, 0..1
};
std::vector<CategoryRow> categoryRollup(const ProfileResult& r);

// Per phase: the time the profiler saw (kernels on a GPU, top-level ops on the CPU) next to
// the phase time the step's own timer measured over the same profiled steps.
struct PhaseTime {
    Phase phase = Phase::Other;
    double profiled_us = 0;
    double measured_us = 0;  // 0 for Other
    int64_t kernels = 0;
};
std::vector<PhaseTime> phaseTimes(const ProfileResult& r);

// ---- Attention: scores, softmax and values (naive) against one fused kernel ----
// Per phase (forward, backward) and per profiled step, summed over layers. Naive attention has
// the three parts (its ranges "scores", "softmax", "values"); SDPA and our FlashAttention
// kernels have one, "fused". FLOPs and bytes come from the model's dimensions: scores and
// values 2·B·H·T²·d each (backward twice that), softmax 5·B·H·T² (backward 3·B·H·T²); bytes
// are the tensors each part must read and write at the precision it computes in.
struct AttentionPart {
    Phase phase = Phase::Forward;
    std::string part;    // "scores", "softmax", "values", "fused"
    double time_us = 0;  // kernel time on a GPU, the ops' self CPU time on the CPU
    double kernels = 0;  // kernels (GPU) or ops (CPU) per step
    double flops = 0;
    double bytes = 0;
    double ns_per_mflop = 0;  // time / FLOPs: the cost of a FLOP in this part (0 without FLOPs)
};
std::vector<AttentionPart> attentionBreakdown(const ProfileResult& r);

// ---- The GPU's activity in each profiled step ----
// A step runs from its "forward" range's start to its last range's end on the main thread.
// Busy is the union of its kernels' intervals (overlapping streams counted once); idle gaps
// are the holes between them longer than `kIdleGapNs`; launch-bound is the share of the wall
// time the GPU sat idle while the CPU was still inside the step (it waited for launches).
inline constexpr int64_t kIdleGapNs = 5'000;
struct IdleGap {
    int64_t start_ns = 0, end_ns = 0;
};
struct StepActivity {
    int step = 0;  // 0-based over the profiled steps
    int64_t start_ns = 0, end_ns = 0;
    double wall_us = 0, busy_us = 0, idle_us = 0;
    double launch_bound = 0;    // 0..1
    int64_t gap_count = 0;      // every idle gap longer than kIdleGapNs
    std::vector<IdleGap> gaps;  // the longest first, at most 100
};
std::vector<StepActivity> stepActivity(const ProfileResult& r);

// ---- The call tree: where the CPU's time goes, op inside op ----
// Note [call tree]: the stored profile keeps no parent links, and needs none: the events of one
// thread nest, so an op's parent is the innermost op of its thread whose interval holds it
// (profiler_calltree.cpp finds them as attribute() does, so profiles stored before the tree
// existed have one too). The tree aggregates by path: the root (the whole profile), then the
// phase, then each component of the op's model range ("layer.0", "attention"), then the op and
// the ops inside it. A backward op on autograd's thread has no ranges around it there, but its
// model range is its forward op's (See Note [attribution]), so it sits under the same
// "layer.0/attention" as its forward op, in the backward phase. An op node's inclusive time is
// the sum of its calls' durations, its self time their time outside child ops; a range's or a
// phase's inclusive time is the sum of what is under it (the ops' time inside it: the gaps
// between ops are not counted), its self time 0. Device time is the kernels an op or its
// children launched (inclusive), so a GPU profile can be weighed by either.
enum class CallNodeKind { Root, Phase, Range, Op };
struct CallTreeNode {
    std::string name;
    CallNodeKind kind = CallNodeKind::Op;
    int parent = -1;            // index into CallTree::nodes; -1 for the root
    std::vector<int> children;  // by inclusive time, descending
    int64_t calls = 0;          // ops: how often this path ran; ranges and phases: 0
    double inclusive_us = 0, self_us = 0;
    double device_us = 0;  // kernel time launched from under it (0 on the CPU)
    int depth = 0;         // the root is 0
};
struct CallTree {
    std::vector<CallTreeNode> nodes;  // nodes[0] is the root (empty: no ops)
    // "forward/layer.0/attention/aten::matmul/aten::mm": the names from below the root.
    std::string path(int node) const;
};
CallTree callTree(const AttributedTrace& trace);
// The tree's nodes depth first (children by inclusive time), down to `max_depth` (0: all) and
// leaving out nodes under `min_share` of the root's inclusive time: the top of the tree.
std::vector<int> callTreeRows(const CallTree& tree, int max_depth = 0, double min_share = 0);

// ---- Two profiles compared: their kernel tables side by side ----
// Note [profile diff]: kernels are matched by name (the kernel table's rows), and each side's
// time and calls are per profiled step, so that a profile of 3 steps compares with one of 1.
// Two GPU profiles compare their kernels; where either has none (a CPU profile), both compare
// their ops by self CPU time instead (the op table's rows), and the diff says which. Rows are
// sorted by |B - A|, largest first; a name only one side has is a row too, with the other
// side's time 0, no ratio and its reason ("only in A").
struct ProfileDiffRow {
    std::string name;
    Category category = Category::Other;
    bool in_a = false, in_b = false;
    double a_us = 0, b_us = 0;        // per profiled step
    double a_calls = 0, b_calls = 0;  // per profiled step
    double delta_us = 0;              // b_us - a_us
    std::optional<double> ratio;      // b_us / a_us where both have it (and a_us > 0)
    std::string note;                 // "only in A", "only in B", empty when in both
};
struct ProfileDiff {
    bool kernels = true;  // false: ops by self CPU time
    int a_steps = 1, b_steps = 1;
    double a_total_us = 0, b_total_us = 0;  // per profiled step, every row's
    std::vector<ProfileDiffRow> rows;
};
// The profiled steps a profile holds (at least 1): its non-warm-up steps, else its spec's.
int profiledStepCount(const ProfileResult& r);
ProfileDiff diffProfiles(const ProfileResult& a, const ProfileResult& b);

// FLOPs per step and the device's peaks: stepFlops(), densePeakTflops() (benchmark.h).

// The trace as Chrome / Perfetto JSON ("traceEvents"): CPU ranges and ops by thread, GPU
// kernels by stream, times in µs from the first event.
std::string chromeTraceJson(const ProfileResult& r);

class ProfileObserver : public Observer {
public:
    // Every step, warm-up (unprofiled) ones included.
    virtual void stepFinished(const StepSample& /*sample*/) {}
    // The profiled steps are done and their events are being read and attributed.
    virtual void profileCollected() {}
};

// Note [Kineto's trace]: chromeTraceJson() is TrainScope's view of a stored profile, for
// Perfetto. TensorBoard's profiler plugin and Holistic Trace Analysis read Kineto's own trace
// (what torch.profiler's export_chrome_trace writes: cpu_op, user_annotation and cuda_runtime
// events with "External id", kernels with "correlation", "stream" and "device", the ac2g flow
// events from each launch to its kernel, "deviceProperties"), which only exists while the
// profiler's result does: a run writes it when asked (ProfileOutputs), it is not stored. So
// that those readers find what they look for, each profiled step is a user annotation
// "ProfilerStep#N" (N from 0: HTA's iterations), which TrainScope's own reading of the events
// leaves out, and the trace's metadata says "distributedInfo": {"rank": 0, "world_size": 1}
// (HTA's rank) and "trainscope": the profiled point.
struct ProfileOutputs {
    std::string kineto_trace;  // a path ending in .json (empty: none)
};
inline constexpr std::string_view kProfilerStepPrefix = "ProfilerStep#";

// Runs the profile. Never throws for a run-time failure (as runBenchmark). When `store` is
// given the result is stored as row 0 of `run_id` before this returns; a row that cannot be
// stored is logged as an Error, as is a Kineto trace that cannot be written.
ProfileResult runProfile(const ProfileSpec& spec, ProfileObserver& observer,
                         const CancelToken& cancel, ResultStore* store = nullptr,
                         int64_t run_id = 0, const ProfileOutputs& outputs = {});

// Note [importing a trace]: `profile import` reads a Chrome trace as torch.profiler writes it
// (export_chrome_trace, Kineto's JSON: {"traceEvents": [...], "deviceProperties": [...]}, or a
// bare list of events) into a ProfileResult, so that every table and pane of the lab serves it.
// Complete events ("ph": "X") become the RawTrace that attribute() reads: "cpu_op" events are
// ops ("External id" their correlation, "Sequence number", "Fwd thread id", "Input Dims"),
// "user_annotation" events ranges, "cuda_runtime" and "cuda_driver" events runtime calls (their
// "correlation" CUPTI's), and "kernel", "gpu_memcpy" and "gpu_memset" events what ran on the GPU
// ("External id" the launching op, "correlation" the runtime call, "stream"); everything else
// (python_function, gpu_user_annotation, flows, metadata) is left out. Times are µs in the
// file, ns here. Each "ProfilerStep#N" annotation is a profiled step (a StepSample of its wall
// time), left out of the ranges. The phases: a trace that names "forward", "backward" and
// "optimizer" ranges (TrainScope's own, or the user's record_function) keeps them; one that
// does not gets them from what PyTorch itself records, step by step: "optimizer" is each
// "Optimizer.step#..." annotation, "backward" on each thread spans its
// "autograd::engine::evaluate_function: ..." ops, and "forward" runs on the step's thread from
// the end of "Optimizer.zero_grad#..." (or the step's start) to the first backward op (or the
// optimizer, or the step's end). The environment's device is deviceProperties[0]'s name, its
// date baseTimeNanoseconds'. A file that is not such a trace (not JSON, truncated, no
// traceEvents, no op or kernel in it) is refused with std::invalid_argument saying why.
// A merged trace of a distributed run's ranks (See Note [one trace of every rank]: a "ranks"
// list, each rank's events under pid = its rank) is one rank's profile: `rank`'s events alone
// (rank < 0: rank 0), the name saying "(rank R of N)"; a rank that is not there, or a rank asked
// of a one-process trace, is refused the same way. `*imported_rank` (when given) is set to the
// rank read, or -1 for a one-process trace.
ProfileResult importChromeTrace(std::string_view json_text, const std::string& name, int rank = -1,
                                int* imported_rank = nullptr);

// Starts LibTorch's profiler (Kineto) on the calling thread, once per process: the thread that
// loaded LibTorch (the window's UI thread), before a profile runs in a worker. See Note
// [Kineto's first thread].
void prepareProfilerOnThisThread();

}  // namespace ts
