// The distributed lab's runner: one rank of a data-parallel run. The step is TrainingStep's
// (model, autocast, loss, FusedAdamW); the gradient synchronisation and the sharded optimizer
// run in its hooks.
#include <ATen/ATen.h>
#include <ATen/record_function.h>
#include <c10/core/DeviceGuard.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

#include "core/observer.h"
#include "distributed/ddp_rank.h"
#include "distributed/rank_traces.h"
#include "nn/training_step.h"
#include "runtime/device.h"
#include "runtime/kineto.h"
#include "runtime/step_ranges.h"
#include "trainscope/distributed/ddp.h"
#include "trainscope/distributed/fsdp.h"
#include "trainscope/distributed/process_group.h"
#include "trainscope/distributed/sharding.h"

namespace ts {
namespace {

int64_t bytesOf(const std::vector<at::Tensor>& tensors) {
    int64_t n = 0;
    for (const auto& t : tensors)
        if (t.defined()) n += t.numel() * static_cast<int64_t>(t.element_size());
    return n;
}

int64_t gradientBytes(const std::vector<at::Tensor>& params) {
    int64_t n = 0;
    for (const auto& p : params)
        if (p.grad().defined())
            n += p.grad().numel() * static_cast<int64_t>(p.grad().element_size());
    return n;
}

// Note [ranks as threads]: TrainingStep seeds LibTorch's default generator and draws the weights
// and the batch from it. Ranks that are threads of one process (the tests) share that generator,
// so building is serialised: every rank then draws exactly what a single process draws, the
// global batch included. Separate processes are unaffected.
std::mutex& buildMutex() {
    static std::mutex m;
    return m;
}

// The step's loss over the global batch, and whether any rank was asked to stop, agreed in one
// small all-reduce after the timed step (all ranks must stop at the same step, or the others
// hang). Returns (global loss, stop).
std::pair<double, bool> agreeAfterStep(dist::Group& group, const c10::Device& device, double loss,
                                       const CancelToken& cancel) {
    std::vector<at::Tensor> agree{
        at::tensor({loss, cancel.cancelled() ? 1.0 : 0.0}, at::TensorOptions().dtype(at::kDouble))
            .to(device.is_cuda() ? device : c10::Device(c10::kCPU))};
    group.backend->allreduce(agree)->wait();
    const at::Tensor agreed = agree[0].cpu();
    return {agreed[0].item<double>() / group.world_size, agreed[1].item<double>() > 0};
}

// See Note [one trace of every rank] (distributed/rank_traces.h): Kineto over this rank's first
// trace_steps measured steps, each in a "ProfilerStep#N" range (N counts warm-up steps too, as
// the rows do), written as rankTraceFile(trace_dir, rank) for the launching process to merge.
// A trace that cannot be written is said on standard error (the run's log) and the steps go on:
// the merge then names the rank whose trace is missing.
class RankTrace {
public:
    RankTrace(const DdpSpec& spec, const dist::Group& group, const c10::Device& device)
        : spec_(spec), group_(group), device_(device) {}
    ~RankTrace() = default;
    RankTrace(const RankTrace&) = delete;
    RankTrace& operator=(const RankTrace&) = delete;

    // Before step `index` (over warm-up and measured steps): starts Kineto before the first
    // measured one.
    void beforeStep(int index) {
        if (spec_.trace_steps > 0 && !spec_.trace_dir.empty() && index == spec_.warmup_steps)
            session_.emplace(device_.is_cuda());
    }
    // After step `index` and its agreement: stops and writes after the last traced one.
    void afterStep(int index) {
        if (index + 1 == spec_.warmup_steps + spec_.trace_steps) finish();
    }
    // Stops and writes what was traced (the steps stopped early: the ones that ran).
    void finish() {
        if (!session_ || !session_->running()) return;
        try {
            KinetoSession::addMetadata(
                "distributedInfo",
                nlohmann::json{{"rank", group_.rank},
                               {"world_size", group_.world_size},
                               {"backend", group_.backend ? group_.backend->getBackendName() : ""}}
                    .dump());
            KinetoSession::addMetadata("trainscope",
                                       nlohmann::json{{"device", spec_.device},
                                                      {"strategy", spec_.strategy},
                                                      {"traced_steps", spec_.trace_steps},
                                                      {"first_step", spec_.warmup_steps}}
                                           .dump());
            const auto result = session_->stop();
            std::error_code ec;
            std::filesystem::create_directories(spec_.trace_dir, ec);
            writeKinetoTrace(*result, rankTraceFile(spec_.trace_dir, group_.rank));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "rank %d: the trace was not written: %s\n", group_.rank, e.what());
        }
        session_.reset();
    }

private:
    const DdpSpec& spec_;
    const dist::Group& group_;
    c10::Device device_;
    std::optional<KinetoSession> session_;
};

// One step of the rank, in a "ProfilerStep#N" range while Kineto records.
StepTimes tracedStep(TrainingStep& step, DeviceTimer& timer, int index) {
    RECORD_USER_SCOPE(fmt::format("ProfilerStep#{}", index));
    return step.run(timer);
}

TrainingSetup rankSetup(const DdpSpec& spec, int world) {
    TrainingSetup setup;
    setup.model = ddpModel(spec);
    setup.batch_size = spec.batch_per_rank * world;  // the global batch; this rank's rows later
    setup.mode = Mode::Train;
    setup.precision = spec.precision;
    setup.attention = spec.attention;
    setup.seed = spec.seed;
    setup.learning_rate = spec.learning_rate;
    setup.checkpoint = spec.checkpoint;
    setup.fused_loss = spec.fused_loss;
    setup.fused_kernels = spec.fused_kernels;
    setup.keep_attention = spec.keep_attention;
    setup.exec = spec.exec;
    setup.weight_copies = false;  // See Note [compiled data-parallel step], item f
    return setup;
}

// See Note [fully sharded units] (distributed/fsdp.h). The model is built whole (the same seed on
// every rank, then rank 0's weights broadcast), sharded at once (the whole weights' memory goes),
// and the step runs with the shards as its parameters; the model reaches its weights through the
// unit hooks.
std::vector<DdpStepRow> runFsdpRank(const DdpSpec& spec, dist::Group& group,
                                    const std::function<void(const DdpStepRow&)>& on_step,
                                    const CancelToken& cancel,
                                    std::vector<at::Tensor>& final_parameters) {
    const c10::Device device = parseDevice(spec.device);
    const int world = group.world_size;
    std::unique_ptr<TrainingStep> step;
    {
        std::lock_guard lock(buildMutex());
        step = std::make_unique<TrainingStep>(rankSetup(spec, world), device);
    }
    step->useBatchRows(group.rank * spec.batch_per_rank, spec.batch_per_rank);
    // The parameters in registration order, for handing back the trained weights in it.
    const std::vector<at::Tensor> registered = step->parameters();
    // Rank 0's weights, a tensor at a time (one flat buffer of an 8B model would be 32 GB more).
    for (const auto& p : registered) dist::broadcastParameters(group, {p});
    TransformerLM& model = step->model();
    const auto units = model->unitWeights();
    std::vector<const c10::TensorImpl*> unit_order;  // each unit slot's tensor, in unit order
    for (const auto& u : units)
        for (const at::Tensor* slot : u) unit_order.push_back(slot->unsafeGetTensorImpl());
    std::vector<at::Tensor> replicated;
    for (at::Tensor* w : model->replicatedWeights()) replicated.push_back(*w);

    dist::FsdpOptions options;
    if (spec.param_dtype == "bf16") options.compute_dtype = at::kBFloat16;
    options.prefetch = spec.prefetch;
    auto fsdp = std::make_unique<dist::FullyShardedParameters>(group, units, replicated, options);
    step->replaceParameters(fsdp->parameters());
    model->setUnitHooks({[&](size_t u) { fsdp->enter(u); },
                         [&](size_t u, const at::Tensor& out) { return fsdp->leave(u, out); }});

    DdpStepRow row;
    row.rank = group.rank;
    row.world_size = world;
    row.parameter_bytes = fsdp->shardBytes() + fsdp->replicatedBytes();
    row.memory_after_model = memoryStats(device).allocated;
    StepHooks hooks;
    hooks.before_forward = [&] { fsdp->beginStep(); };
    hooks.before_backward = [&] {
        row.memory_after_forward = memoryStats(device).allocated;
        fsdp->beginBackward();
    };
    hooks.after_backward = [&] {
        fsdp->finishBackward();
        row.memory_after_backward = memoryStats(device).allocated;
        row.gradient_bytes = gradientBytes(step->parameters());
    };
    step->setHooks(std::move(hooks));

    std::vector<DdpStepRow> rows;
    const int total = spec.warmup_steps + spec.measured_steps;
    DeviceTimer timer(device, 5);
    // See Note [capture ranges]: the rank's warm-up and measured steps.
    StepRanges ranges(device, spec.cuda_profiler_range, nullptr);
    RankTrace trace(spec, group, device);
    for (int i = 0; i < total; ++i) {
        const StepRanges::Step step_range = ranges.step(i, i < spec.warmup_steps);
        trace.beforeStep(i);
        const StepTimes t = tracedStep(*step, timer, i);
        const dist::FsdpCounters c = fsdp->counters();
        row.step = i;
        row.warmup = i < spec.warmup_steps;
        row.forward_ms = t.forward_ms;
        row.backward_ms = t.backward_ms;
        row.comm_wait_ms = t.sync_ms;
        row.optimizer_ms = t.optimizer_ms;
        row.total_ms = t.total_ms;
        row.collectives = c.gathers + c.reduce_scatters + 1;
        row.launched_before_sync = c.gathers + c.reduce_scatters;
        row.comm_bytes = c.gather_bytes + c.reduce_scatter_bytes + fsdp->replicatedBytes();
        row.gather_bytes = c.gather_bytes;
        row.reduce_scatter_bytes = c.reduce_scatter_bytes;
        row.sent_bytes = ringSentBytes(world, fsdp->replicatedBytes(), c.reduce_scatter_bytes,
                                       c.gather_bytes, 0);
        row.units_gathered = c.max_units_gathered;
        row.gather_ms = c.gather_ms;
        row.reduce_scatter_ms = c.reduce_scatter_ms;
        row.gather_wait_forward_ms = c.forward_wait_ms;
        row.gather_wait_backward_ms = c.backward_wait_ms;
        // Communication that overlapped compute: the collectives' device time less what compute
        // waited for (a bound from below, as for the overlapped strategies).
        row.comm_hidden_ms =
            c.gather_ms < 0 || c.reduce_scatter_ms < 0
                ? -1
                : std::max(0.0, c.gather_ms + c.reduce_scatter_ms - c.forward_wait_ms -
                                    c.backward_wait_ms - t.sync_ms);
        row.loss = t.loss;
        row.memory_after_optimizer = t.memory_allocated;
        row.memory_peak = t.memory_peak;
        row.optimizer_state_bytes = bytesOf(step->optimizer().state());
        const auto [global_loss, stop] = agreeAfterStep(group, device, t.loss, cancel);
        row.global_loss = global_loss;
        trace.afterStep(i);
        rows.push_back(row);
        if (on_step) on_step(row);
        if (stop) break;
    }
    trace.finish();
    ranges.finish();
    // The trained weights, whole, in registration order (a collective: every rank gathers).
    const std::vector<at::Tensor> whole = fsdp->wholeWeights();
    final_parameters.clear();
    for (const auto& p : registered) {
        const auto it = std::find(unit_order.begin(), unit_order.end(), p.unsafeGetTensorImpl());
        if (it != unit_order.end()) {
            final_parameters.push_back(whole[static_cast<size_t>(it - unit_order.begin())]);
        } else {
            final_parameters.push_back(p);  // a replicated weight: the model's own tensor
        }
    }
    model->setUnitHooks({});
    return rows;
}

}  // namespace

std::vector<DdpStepRow> runDdpRank(const DdpSpec& spec, dist::Group& group,
                                   const std::function<void(const DdpStepRow&)>& on_step,
                                   const CancelToken& cancel) {
    std::vector<at::Tensor> unused;
    return runDdpRank(spec, group, on_step, cancel, unused);
}

std::vector<DdpStepRow> runDdpWorker(const DdpSpec& spec, const dist::GroupSpec& group_spec,
                                     const std::function<void(const DdpStepRow&)>& on_step,
                                     const CancelToken& cancel) {
    if (auto errors = validateDdpSpec(spec); !errors.empty())
        throw std::invalid_argument(errors.front());
    const c10::Device device = parseDevice(spec.device);
    c10::OptionalDeviceGuard device_guard;  // NCCL's communicators on this rank's GPU
    if (device.is_cuda()) device_guard.reset_device(device);
    dist::Group group = dist::makeGroup(group_spec);
    return runDdpRank(spec, group, on_step, cancel);
}

void runDdpWorkerPoints(const std::vector<DdpSpec>& specs, const dist::GroupSpec& group_spec,
                        const std::function<void(size_t point, const DdpStepRow&)>& on_step,
                        const std::function<void(size_t point)>& on_point,
                        const CancelToken& cancel) {
    if (specs.empty()) return;
    for (const DdpSpec& spec : specs)
        if (auto errors = validateDdpSpec(spec); !errors.empty())
            throw std::invalid_argument(errors.front());
    const c10::Device device = parseDevice(specs.front().device);
    c10::OptionalDeviceGuard device_guard;  // NCCL's communicators on this rank's GPU
    if (device.is_cuda()) device_guard.reset_device(device);
    dist::Group group = dist::makeGroup(group_spec);
    for (size_t k = 0; k < specs.size(); ++k) {
        if (cancel.cancelled()) break;
        runDdpRank(
            specs[k], group, [&](const DdpStepRow& row) { on_step(k, row); }, cancel);
        if (on_point) on_point(k);
    }
}

std::vector<DdpStepRow> runDdpRank(const DdpSpec& spec, dist::Group& group,
                                   const std::function<void(const DdpStepRow&)>& on_step,
                                   const CancelToken& cancel,
                                   std::vector<at::Tensor>& final_parameters) {
    if (auto errors = validateDdpSpec(spec); !errors.empty())
        throw std::invalid_argument(errors.front());
    const c10::Device device = parseDevice(spec.device);
    c10::OptionalDeviceGuard device_guard;  // NCCL's own work goes to this rank's GPU
    if (device.is_cuda()) device_guard.reset_device(device);
    if (spec.strategy == "fsdp") return runFsdpRank(spec, group, on_step, cancel, final_parameters);
    if (spec.strategy == "fsdp2")
        throw std::invalid_argument(
            "fsdp2 is PyTorch's fully_shard: the Python runner runs it, not this worker");
    const int world = group.world_size;
    // zero1 is a gradient sync and the optimizer's step at once (see Note [two ways to shard the
    // optimizer]); the others a sync, with the course's sharded optimizer when asked.
    std::shared_ptr<FusedAdamW> shard_optimizer;
    auto makeShardStep = [&](std::vector<at::Tensor> shard) {
        shard_optimizer = std::make_shared<FusedAdamW>(std::move(shard), spec.learning_rate);
        return dist::ShardedOptimizer::LocalStep([opt = shard_optimizer] { opt->step(); });
    };
    dist::ReduceScatterSharding* zero1 = nullptr;
    std::unique_ptr<dist::GradientSync> sync;
    if (spec.strategy == "zero1") {
        auto z = std::make_unique<dist::ReduceScatterSharding>(makeShardStep);
        zero1 = z.get();
        sync = std::move(z);
    } else {
        sync = dist::makeGradientSync(spec.strategy, spec.bucket_mb);
    }
    const bool compiled = spec.exec == ExecMode::Compiled;
    sync->setCaptured(compiled);  // See Note [compiled data-parallel step]
    if (const char* blocking = std::getenv("TORCH_NCCL_BLOCKING_WAIT");
        compiled && blocking && std::string(blocking) != "0")
        throw std::invalid_argument(
            "compiled mode: TORCH_NCCL_BLOCKING_WAIT makes each collective's wait poll from the "
            "host, which a CUDA graph capture cannot hold; unset it");

    std::unique_ptr<TrainingStep> step;
    {
        std::lock_guard lock(buildMutex());
        step = std::make_unique<TrainingStep>(rankSetup(spec, world), device);
    }
    step->useBatchRows(group.rank * spec.batch_per_rank, spec.batch_per_rank);
    const auto& params = step->parameters();
    dist::broadcastParameters(group, params);
    sync->prepare(group, params);

    std::unique_ptr<dist::ShardedOptimizer> sharded;
    if (spec.shard_optimizer)
        sharded = std::make_unique<dist::ShardedOptimizer>(group, params, makeShardStep);

    DdpStepRow row;
    row.rank = group.rank;
    row.world_size = world;
    row.parameter_bytes = bytesOf(params);
    row.comm_buffer_bytes = sync->bufferBytes();
    row.memory_after_model = memoryStats(device).allocated;

    StepHooks hooks;
    // Compiled: the hooks run at capture only (see Note [compiled data-parallel step]); the
    // bucket times that stepStarted() starts are off.
    if (!compiled) hooks.before_forward = [&] { sync->stepStarted(); };
    hooks.sync_joins_backward = sync->launchesDuringBackward();
    hooks.stepped_optimizer = shard_optimizer.get();
    hooks.before_backward = [&] {
        row.memory_after_forward = memoryStats(device).allocated;
        sync->beforeBackward();
    };
    hooks.after_backward = [&] {
        sync->afterBackward();
        row.memory_after_backward = memoryStats(device).allocated;
        row.gradient_bytes = gradientBytes(params);
    };
    if (sharded) hooks.optimizer_step = [&] { sharded->step(); };
    if (zero1) hooks.optimizer_step = [&] { zero1->step(); };
    step->setHooks(std::move(hooks));

    std::vector<DdpStepRow> rows;
    const int total = spec.warmup_steps + spec.measured_steps;
    DeviceTimer timer(device, 5);
    // See Note [capture ranges]: the rank's warm-up and measured steps.
    StepRanges ranges(device, spec.cuda_profiler_range, nullptr);
    RankTrace trace(spec, group, device);
    for (int i = 0; i < total; ++i) {
        const StepRanges::Step step_range = ranges.step(i, i < spec.warmup_steps);
        trace.beforeStep(i);
        const StepTimes t = tracedStep(*step, timer, i);
        const dist::SyncCounters& c = sync->counters();
        row.step = i;
        row.warmup = i < spec.warmup_steps;
        row.forward_ms = t.forward_ms;
        row.backward_ms = t.backward_ms;
        row.comm_wait_ms = t.sync_ms;
        row.optimizer_ms = t.optimizer_ms;
        row.total_ms = t.total_ms;
        row.comm_hidden_ms = c.hidden_ms;
        if (row.comm_hidden_ms < 0) {
            // NCCL (see Note [hidden communication]): the collectives' device time less the compute
            // stream's wait after backward, which also holds the strategy's copies, so a bound
            // from below. The timer's last mark has been waited for, so their events are done.
            const double device_ms = sync->deviceCommMs();
            if (device_ms >= 0) row.comm_hidden_ms = std::max(0.0, device_ms - t.sync_ms);
        }
        // See Note [per-bucket timing]: the step is done on the device, its events too.
        dist::SyncTimeline timeline = sync->timeline();
        row.buckets = std::move(timeline.buckets);
        row.gradients = std::move(timeline.gradients);
        row.collectives = c.collectives;
        row.launched_before_sync = c.launched_before_sync;
        row.comm_bytes = c.bytes;
        row.broadcast_bytes = sharded ? sharded->lastBroadcastBytes() : 0;
        if (zero1) {
            row.reduce_scatter_bytes = c.bytes;
            row.gather_bytes = zero1->lastGatherBytes();
        }
        row.sent_bytes =
            zero1 ? ringSentBytes(world, 0, row.reduce_scatter_bytes, row.gather_bytes, 0)
                  : ringSentBytes(world, row.comm_bytes, 0, 0, row.broadcast_bytes);
        row.loss = t.loss;
        row.memory_after_optimizer = t.memory_allocated;
        row.memory_peak = t.memory_peak;
        row.optimizer_state_bytes =
            bytesOf(shard_optimizer ? shard_optimizer->state() : step->optimizer().state());
        const auto [global_loss, stop] = agreeAfterStep(group, device, t.loss, cancel);
        row.global_loss = global_loss;
        trace.afterStep(i);
        rows.push_back(row);
        if (on_step) on_step(row);
        if (stop) break;
    }
    trace.finish();
    ranges.finish();
    final_parameters = params;
    return rows;
}

}  // namespace ts
