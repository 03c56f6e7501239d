// The distributed lab: data-parallel training of the Transformer LM over c10d ranks, each rank a
// process (or, in tests, a thread) that calls runDdpRank with its group. Gradients are averaged
// by one of four strategies (distributed/ddp.h); the optimizer's state can be sharded over the
// ranks (ZeRO stage 1, distributed/sharding.h). Plain value types here, no LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"
#include "core/observer.h"
#include "core/point.h"
#include "core/result.h"
#include "trainscope/distributed/allreduce_bench.h"
#include "trainscope/distributed/bucket_model.h"
#include "trainscope/distributed/group_spec.h"

namespace ts::dist {
struct Group;
}

namespace ts {

class CancelToken;

struct DdpSpec {
    std::string model_size = "tiny";  // a preset of modelPreset()
    int64_t context_length = 128;
    int64_t vocab_size = 10000;
    int64_t batch_per_rank = 4;  // the global batch is batch_per_rank × world size rows
    Precision precision = Precision::FP32;
    AttentionImpl attention = AttentionImpl::Naive;
    // "naive", "flat", "overlap", "bucketed" (gradients all-reduced, every rank the whole
    // model); "zero1" (ZeRO stage 1 as DeepSpeed does it: gradients reduce-scattered, each rank
    // steps its slice, the slices all-gathered: see Note [two ways to shard the optimizer] in
    // distributed/sharding.h); "fsdp" (fully sharded: see Note [fully sharded units] in
    // distributed/fsdp.h); "fsdp2" (PyTorch's fully_shard on the course's model, run by the Python
    // runner: the reference at the same settings); "torch-ddp" (PyTorch's DistributedDataParallel,
    // with ZeroRedundancyOptimizer when sharded); the user's own (see Note [your DDP classes]):
    // "yours-individual", "yours-bucketed", "yours-ddp", "yours-fsdp".
    std::string strategy = "bucketed";
    // bucketed only, in MiB (2^20 bytes, as PyTorch's bucket_cap_mb; the key keeps its old name
    // so that stored runs read); the first bucket is 1 MiB, as PyTorch's.
    double bucket_mb = 25.0;
    // The course's optimizer-state sharding: gradients all-reduced by the strategy, each rank
    // steps the parameters it owns, the owners broadcast them (not with fsdp or zero1, which
    // shard the state their own way).
    bool shard_optimizer = false;
    // fsdp, fsdp2: the dtype weights are gathered and computed in, and gradients reduced in
    // ("fp32", "bf16": needs bf16 precision); fp32 master weights either way. fsdp: forward
    // gathers unit i once unit i − prefetch has run (0: when it is about to run).
    std::string param_dtype = "fp32";
    int prefetch = 2;
    Checkpointing checkpoint;  // see Note [activation checkpointing] (core/point.h)
    // TrainScope's strategies: the LM head and the loss fused, the logits never whole (see Note
    // [fused LM head and loss] in engine/src/nn/model.h).
    bool fused_loss = false;
    // TrainScope's strategies: the element-wise chains as this project's fused kernels (the
    // compiled mode's model, eager: see Note [fused model] in engine/src/nn/model.cpp).
    bool fused_kernels = false;
    // With fused_kernels, flash attention and checkpointing: a checkpoint's recompute reuses
    // attention's output (see Note [attention kept through a checkpoint] in nn/fused.h).
    bool keep_attention = false;
    // fsdp2: torch.compile each block and the LM head with the loss (the reference's own).
    bool compile = false;
    // TrainScope's naive, flat, overlap, bucketed and zero1 (with or without the sharded
    // optimizer): eager, or compiled (the whole step, NCCL's collectives included, captured as
    // CUDA graphs and replayed: see Note [compiled data-parallel step] in
    // engine/src/nn/graphed_step.cpp). NCCL only.
    ExecMode exec = ExecMode::Eager;
    int warmup_steps = 2;
    int measured_steps = 5;
    // cudaProfilerStart/Stop around each rank's measured steps (See Note [capture ranges],
    // runtime/step_ranges.h); NVTX ranges "warmup", "measured" and "step N" either way.
    bool cuda_profiler_range = false;
    // TrainScope's strategies: the first trace_steps measured steps (0: none) under Kineto on
    // every rank, each rank's Chrome trace written to trace_dir (rankTraceFile), which the
    // launching process sets per point and merges (see Note [one trace of every rank] in
    // distributed/rank_traces.h).
    int trace_steps = 0;
    std::string trace_dir;
    uint64_t seed = 0;
    double learning_rate = 1e-4;
    std::string device = "cpu";  // this rank's device ("cuda:N" for NCCL, "cpu" for Gloo)
    // The Python strategies (torch-ddp, yours-*): where the user's code is (--code: a course
    // checkout, a file of adapter functions or module:Name; its checkout's model is the model
    // of torch-ddp and yours-* when it has one) and the interpreter (empty: the default).
    std::string code;
    std::string python;
};

// Note [your DDP classes]: the course's DDP problems as the user wrote them, each run by the
// Python runner (runner/trainscope_runner/ddp.py) as one process a rank under the same launcher:
// yours-individual (2025: get_ddp_individual_parameters + its after-backward hook),
// yours-bucketed (2025: get_ddp_bucketed, its bucket size the point's), yours-ddp (2026:
// get_ddp), yours-fsdp (2026: get_fsdp, compared through fsdp_gather_full_params), each with the
// user's get_sharded_optimizer when the point is sharded. Before it is timed, each passes the
// course's check: after 3 SGD steps on one global batch (each rank its rows, every rank's copy
// seeded differently so that a missing broadcast shows), every parameter equals single-process
// training within atol 1e-5 + rtol 1e-4. A point whose check fails is failed with the largest
// difference and is not timed. Its communication is measured by wrapping torch.distributed's
// collectives: how many, their bytes, how many started during backward; the communication
// hidden behind backward is the step's collectives replayed alone less the wait after backward.
struct StrategyTraits {
    bool python = false;         // run by the Python runner (fsdp2, torch-ddp, yours-*)
    bool users = false;          // the user's code (yours-*): needs --code
    bool sharded_model = false;  // shards the weights, and so the optimizer's state
    // Shards the optimizer's state its own way (the sharded-model ones and zero1): one point of
    // a sweep, never with the course's sharding.
    bool shards_optimizer = false;
    bool bucket_size = false;  // takes a bucket size (bucketed, yours-bucketed, torch-ddp)
    const char* runner = "";   // the runner's command: "fsdp2", "ddp"
};
StrategyTraits strategyTraits(std::string_view strategy);
// "yours" in a strategy list: the user's strategies whose adapters `code` defines (a checkout's
// tests/adapters.py or a file of adapter functions, read as text: 2025's
// get_ddp_individual_parameters and get_ddp_bucketed, 2026's get_ddp and get_fsdp); throws
// std::invalid_argument when it cannot tell (module:Name, a module name, no such adapters).
std::vector<std::string> userDdpStrategies(const std::string& code);

// A bucket size as the CLI and the panel take it, in MiB: a bare number is MiB (PyTorch's
// bucket_cap_mb), or a number with its unit written: 25MiB, 25MB (10^6 bytes), 512KiB, 1GB, 4096B.
// nullopt for anything else; the range is the caller's to check (kMaxBucketMiB).
std::optional<double> parseBucketMiB(std::string_view text);
// "25 MiB", "0.5 MiB": a bucket size for people.
std::string formatBucketMiB(double mib);
// Beyond this a bucket's size in bytes would overflow its integer; any model's gradients fit.
inline constexpr double kMaxBucketMiB = 1e6;

// Note [bytes sent per step]: what a rank puts on the wire for a collective of b payload bytes over
// N ranks, as ring algorithms move it (nccl-tests' bus-bandwidth factors): an all-reduce
// 2(N−1)/N·b (a reduce-scatter, then an all-gather), a reduce-scatter of b input bytes and an
// all-gather of b output bytes (N−1)/N·b each, a broadcast of b bytes (N−1)/N·b on average over
// the ranks (N−1 ranks receive b, forwarded along a chain). Counted from the payloads the step's
// collectives were given, so the schemes' difference is in the rows, not only in the docs.
int64_t ringSentBytes(int world, int64_t allreduce, int64_t reduce_scatter, int64_t all_gather,
                      int64_t broadcast);

// The strategies' names, in display order.
const std::vector<std::string>& ddpStrategyNames();
// Every problem with the spec, each a sentence naming the bad value; empty if valid.
std::vector<std::string> validateDdpSpec(const DdpSpec& spec);
// Why the spec's exec mode cannot run it (a torch.compile mode, compiled with a Python strategy,
// fsdp, checkpointing or fp16); empty when it can. The backend is the point's: compiled needs
// NCCL (validateDistributedPoint), and the rank's device CUDA (TrainingStep).
std::string ddpExecProblem(const DdpSpec& spec);
// The model the spec names (its preset with the spec's context length and vocabulary).
ModelConfig ddpModel(const DdpSpec& spec);

// One step on one rank. Times in ms: forward (and loss), backward, comm_wait (from backward's end
// until every gradient is averaged: the communication backward did not hide, plus the strategy's
// copies), optimizer (with sharding: the local step and the broadcasts), total. Device times on a
// GPU (CUDA events), the host's clock on the CPU. A compiled step's overlapped strategies have no
// comm_wait (-1: it is inside backward's graph) and no hidden time or bucket spans (see Note
// [compiled data-parallel step], item c).
struct DdpStepRow {
    int rank = 0;
    int world_size = 1;
    int step = 0;
    bool warmup = false;
    double forward_ms = 0, backward_ms = 0, comm_wait_ms = 0, optimizer_ms = 0, total_ms = 0;
    // Communication that ran while backward still did (see Note [hidden communication] in
    // distributed/src/ddp.cpp): Gloo: the host's clock on the collectives' spans; NCCL: their
    // device time less comm_wait_ms (a bound from below); 0 for naive and flat; negative where
    // not measured.
    double comm_hidden_ms = -1;
    int collectives = 0;           // all-reduces of gradients this step
    int launched_before_sync = 0;  // ... started from the gradient hooks, during backward
    int64_t comm_bytes = 0;        // gradient bytes all-reduced (zero1: reduce-scattered)
    int64_t broadcast_bytes = 0;   // parameter bytes broadcast after a sharded step
    // The bytes this rank sent in the step, from the payloads above by the ring algorithms'
    // counts (see Note [bytes sent per step]); 0 where not known (rows stored before, Python's).
    int64_t sent_bytes = 0;
    double loss = 0;         // this rank's mean loss over its rows
    double global_loss = 0;  // the mean over ranks: the loss of the whole global batch
    // The caching allocator's bytes (0 on the CPU): after building the model (and broadcasting
    // it), after forward, after backward (gradients averaged), after the optimizer; the step's
    // peak.
    int64_t memory_after_model = 0, memory_after_forward = 0, memory_after_backward = 0,
            memory_after_optimizer = 0, memory_peak = 0;
    // Exact sizes of this rank's tensors (on any device): parameters, gradients after backward,
    // the optimizer's state (this rank's shard when sharded), the strategy's flat/bucket buffers.
    int64_t parameter_bytes = 0, gradient_bytes = 0, optimizer_state_bytes = 0,
            comm_buffer_bytes = 0;
    // Fully sharded (fsdp) and zero1 (its reduce-scatter of gradients and all-gather of
    // parameters): the all-gathers' and reduce-scatters' device time (NCCL's; negative
    // where not measured), how long compute waited for weights not yet gathered, in forward and
    // in backward (device time on a GPU, the host's clock on the CPU), the whole weights
    // received and gradients sent in, and the most units held whole at once.
    double gather_ms = -1, reduce_scatter_ms = -1;
    double gather_wait_forward_ms = 0, gather_wait_backward_ms = 0;
    int64_t gather_bytes = 0, reduce_scatter_bytes = 0, units_gathered = 0;
    // overlap and bucketed: each bucket's all-reduce in time (ready, launched, done) and each
    // gradient's ready time, in ms from the step's start (see Note [per-bucket timing] in
    // distributed/src/ddp.cpp); empty for the other strategies and rows stored before.
    std::vector<dist::BucketSpan> buckets;
    std::vector<dist::GradientReady> gradients;  // Where the rank ran when torchrun or srun started
                                                 // it ("node 1 (gpu-b)"; see Note [started by
    // torchrun or srun]); empty for the local launcher's ranks, which share this machine.
    std::string node;
};

// Runs this rank's part of a data-parallel training run: builds the model as TrainingStep does
// (the same seed on every rank, then rank 0's weights broadcast), takes rows
// [rank·b, (rank+1)·b) of the global batch of b·world rows (so one process training the whole
// global batch is the reference), then warm-up and measured steps. `on_step` hears every step
// (warm-up included) on this rank; the rows are returned too. Every rank must call it with the
// same spec. A cancel on any rank stops all ranks after the step in progress (the ranks agree on
// it in the step's loss reduction). Throws std::invalid_argument for an invalid spec and
// LibTorch's or c10d's errors as they come; a rank that fails leaves the others waiting in their
// next collective until the group's timeout (the launcher ends them).
std::vector<DdpStepRow> runDdpRank(const DdpSpec& spec, dist::Group& group,
                                   const std::function<void(const DdpStepRow&)>& on_step,
                                   const CancelToken& cancel);

// The same for a rank placed by `group` (a worker process: the environment torchrun, srun or
// the local launcher set): makes the c10d group, then runs. The spec's device is this rank's.
std::vector<DdpStepRow> runDdpWorker(const DdpSpec& spec, const dist::GroupSpec& group,
                                     const std::function<void(const DdpStepRow&)>& on_step,
                                     const CancelToken& cancel);

// Note [a world kept across points]: a sweep's points of TrainScope's own strategies with the
// same world (size, backend) run in one launch: each rank makes its c10d group once and runs the
// points in order on it, as ranks started by torchrun do (external_runner.cpp). `on_step` hears
// each point's steps with the point's index, `on_point` each point's end on this rank. Starting
// a world again for every point cost each rank LibTorch's start, the rendezvous and (NCCL) a
// CUDA context and communicators: most of a small point's time. A rank that fails ends the
// launch; the runner starts the points after it in a world of their own.
void runDdpWorkerPoints(const std::vector<DdpSpec>& specs, const dist::GroupSpec& group,
                        const std::function<void(size_t point, const DdpStepRow&)>& on_step,
                        const std::function<void(size_t point)>& on_point,
                        const CancelToken& cancel);

// ---- The lab: points of N ranks each, launched as processes, their rows merged ----

// The lab's id: the store's run kind.
inline constexpr const char* kDistributedLab = "distributed";

enum class DistExperiment { Allreduce, Ddp };
std::string_view toString(DistExperiment e);  // "allreduce", "ddp"
std::optional<DistExperiment> parseDistExperiment(std::string_view s);

// One launch of world_size ranks: a point of a distributed run.
struct DistributedPoint {
    DistExperiment experiment = DistExperiment::Ddp;
    dist::CommBackend backend = dist::CommBackend::Gloo;
    int world_size = 2;
    dist::AllreduceSpec allreduce;  // experiment Allreduce
    DdpSpec ddp;  // experiment Ddp; its device is each rank's own (cpu, cuda:LOCAL_RANK)
};

struct DistributedSpec {
    std::vector<DistributedPoint> points;  // run one after another
    double hang_timeout_s = 300;           // a rank silent this long is taken as hung
};

// The DDP sweep the panel and the CLI make from one base point: one point per precision ×
// strategy × sharding × exec mode, the bucketed strategy once per bucket size, fsdp and fsdp2
// once (they shard the optimizer's state themselves). The base's fused loss and traced steps go
// to TrainScope's strategies only, its compile to fsdp2's only. Exec modes (empty: the base's):
// each for TrainScope's replicated strategies, side by side; the Python ones and fsdp run eager
// once when eager is among them.
std::vector<DistributedPoint> ddpSweep(const DistributedPoint& base,
                                       const std::vector<Precision>& precisions,
                                       const std::vector<std::string>& strategies,
                                       const std::vector<double>& bucket_mbs,
                                       const std::vector<bool>& shardings,
                                       const std::vector<ExecMode>& execs = {});
// Every problem with a point before anything starts (world size below 1, NCCL with more ranks
// than `gpus` or not built, a bad all-reduce or DDP spec, a tensor past 1 TiB as the benchmark
// refuses it, Gloo's CPU ranks that together need more than the host's `host_available` bytes
// (0: not checked)), each a sentence; empty if valid.
std::vector<std::string> validateDistributedPoint(const DistributedPoint& p, int gpus,
                                                  bool nccl_built, int64_t host_available = 0);
// A Python strategy's interpreter that is not there, or user's code (--code) that cannot be
// what it runs (runtime/python_runner.h), without starting Python; empty when it may run, and
// for TrainScope's own strategies. Needs the engine (not trainscope_core).
std::string pythonStrategyProblem(const DdpSpec& spec);
// How a point shards the optimizer's state, named by what it communicates (see Note [two ways
// to shard the optimizer] in distributed/sharding.h): "no", "all-reduce + broadcast" (the
// course's), "reduce-scatter + all-gather" (zero1), "all" (fully sharded).
std::string ddpShardingName(const DdpSpec& d);
// "ddp bucketed 25 MiB sharded xl ctx=256 b=4/rank bf16 × 2 nccl", "allreduce fp32,bf16 × 2 gloo"
std::string pointHeadline(const DistributedPoint& p);

// One point's outcome. A rank that failed, exited or hung ends the point as Failed, naming it.
// The course's correctness check of a DDP class (see Note [your DDP classes]).
struct DdpCheck {
    bool ran = false;
    bool passed = false;
    double max_diff = -1;   // the largest |parameter − single-process parameter|
    int steps = 0;          // SGD steps before the comparison
    std::string tolerance;  // "atol 1e-05, rtol 1e-04"
    std::string message;    // one line: what was compared, and what differs
};

struct DistributedResult {
    DistributedPoint point;
    Status status = Status::Ok;
    DdpCheck check;
    std::string what;  // the user's class the point ran, as the runner described it
    std::string
        traceback;  // the failed rank's Python traceback (the user's frames), if it sent one
    std::string error;
    std::string
        store_error;  // set when a row of this point could not be stored: the run stopped there
    int failed_rank = -1;
    std::vector<std::string> rank_devices;  // per rank, as each reported it
    std::vector<std::string> rank_nodes;    // per rank under torchrun or srun, else empty
    std::vector<dist::AllreduceRow> allreduce;
    std::vector<DdpStepRow> steps;  // every rank's every step (warm-up included), in arrival order
    // The point's merged trace of every rank (trace_steps), a file beside the store; empty: none.
    std::string trace_file;
    Environment environment;  // the launching process's
};

// A DDP point over its measured steps: per step the slowest rank (a step ends when every
// rank's does), then the mean over steps; memory and sizes are the largest rank's.
struct DdpSummary {
    int steps = 0;
    double step_ms = 0, forward_ms = 0, backward_ms = 0, comm_wait_ms = 0, optimizer_ms = 0;
    double step_std_ms = 0, step_median_ms = 0;
    double hidden_ms = -1;     // communication hidden behind backward (negative: not measured)
    double hidden_share = -1;  // hidden / (hidden + comm_wait): the share of communication hidden
    double final_global_loss = 0;
    int64_t comm_bytes = 0, broadcast_bytes = 0, sent_bytes = 0;
    int64_t memory_peak = 0, parameter_bytes = 0, gradient_bytes = 0, optimizer_state_bytes = 0,
            comm_buffer_bytes = 0;
    int64_t memory_after_model = 0, memory_after_forward = 0, memory_after_backward = 0,
            memory_after_optimizer = 0;
    // fsdp (the slowest rank's mean per step): see DdpStepRow.
    double gather_ms = -1, reduce_scatter_ms = -1;
    double gather_wait_forward_ms = 0, gather_wait_backward_ms = 0;
    int64_t gather_bytes = 0, reduce_scatter_bytes = 0, units_gathered = 0;
};
DdpSummary summarizeDdp(const DistributedResult& r);

class DistributedObserver : public Observer {
public:
    virtual void pointStarted(int /*index*/, int /*count*/, const DistributedPoint& /*point*/) {}
    virtual void rankReady(int /*index*/, int /*rank*/, const std::string& /*device*/) {}
    // As each rank's step arrives (warm-up included), while the point runs.
    virtual void ddpStep(int /*index*/, const DdpStepRow& /*row*/) {}
    virtual void allreduceMeasured(int /*index*/, const dist::AllreduceRow& /*row*/) {}
    virtual void pointFinished(int /*index*/, const DistributedResult& /*result*/) {}
};

// Where runDistributed writes files beside the run: each traced point's merged trace (see Note
// [one trace of every rank]) goes to trace_dir, or when empty to the folder beside the store
// (mergedTracePath), or without a store to the current folder.
struct DistributedOutputs {
    std::string trace_dir;
};

class ResultStore;
// Runs the points one after another, each as world_size processes of `worker` (the
// trainscope-cli executable: `worker --experiment allreduce|ddp ...`) through the local
// launcher, which stops and reaps every rank when one fails or hangs, or on a cancel. Each
// rank's lines become the observer's calls as they arrive. With a store, each point's rows go
// to run `run_id` as they arrive (one row per rank and step, or per size and dtype), then one
// closing row for the point. A DDP point with traced steps has its ranks' traces merged into
// one file once every rank is done (DistributedResult::trace_file; a merge that fails is a
// Warning, the point's rows stand). Never throws for a failed point.
std::vector<DistributedResult> runDistributed(const DistributedSpec& spec,
                                              const std::string& worker,
                                              DistributedObserver& observer,
                                              const CancelToken& cancel,
                                              ResultStore* store = nullptr, int64_t run_id = 0,
                                              const DistributedOutputs& outputs = {});

// Note [ranks started by torchrun or srun]: this process is one rank of the run (`group`, read
// from the environment), `node` where it runs. Every point runs on one c10d group made once,
// each point's world size the group's. After each point the other ranks put their rows in the
// group's store and rank 0 gathers them (see Note [rows through the store]): rank 0's results
// are what runDistributed's would be, its observer hears its own steps live and the others'
// once gathered, and with a store every row goes to run `run_id` as on a local run. A rank that
// fails posts its message and throws; rank 0 names it (the point Failed, its failed_rank), and
// waits for nobody past `spec.hang_timeout_s`: a rank silent that long is taken as failed (a
// collective with it fails by then, the group's timeout being the same). Returns every point's
// result on rank 0, and nothing on the others (which throw std::runtime_error when they fail).
// The all-reduce experiment needs no gathering: rank 0's rows hold every rank's times.
std::vector<DistributedResult> runDistributedAsRank(
    const DistributedSpec& spec, const dist::GroupSpec& group, const std::string& node,
    DistributedObserver& observer, const CancelToken& cancel, ResultStore* store = nullptr,
    int64_t run_id = 0);

}  // namespace ts
