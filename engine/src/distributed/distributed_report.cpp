#include "distributed/distributed_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>
#include <tuple>

#include "core/json.h"
#include "core/table.h"
#include "distributed/distributed_json.h"

namespace ts {

namespace {

std::string ms(double v) {
    return v >= 100 ? fmt::format("{:.1f}", v)
           : v >= 1 ? fmt::format("{:.2f}", v)
                    : fmt::format("{:.3f}", v);
}
std::string mib(int64_t bytes) {
    return fmt::format("{:.1f}", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

std::string ddpCsv(const std::vector<DistributedResult>& results);
std::string fsdpCsv(const std::vector<DistributedResult>& results);

}  // namespace

std::string formatAllreduceRows(const std::vector<dist::AllreduceRow>& rows, TableFormat format,
                                const std::string& heading) {
    const bool ideal =
        std::any_of(rows.begin(), rows.end(), [](const auto& r) { return r.ideal_ms > 0; });
    TextTable t;
    if (format == TableFormat::Csv) {
        t.headers = {"bytes",      "dtype",      "backend",          "world_size",
                     "iters",      "time_ms",    "rank_mean_min_ms", "fastest_ms",
                     "slowest_ms", "algbw_gbps", "busbw_gbps",       "ideal_ms"};
        for (const auto& r : rows)
            t.rows.push_back({fmt::format("{}", r.bytes), dist::dtypeName(r.dtype),
                              dist::backendName(r.backend), fmt::format("{}", r.world_size),
                              fmt::format("{}", r.iters), fmt::format("{}", r.time_ms),
                              fmt::format("{}", r.rank_mean_min_ms),
                              fmt::format("{}", r.fastest_ms), fmt::format("{}", r.slowest_ms),
                              fmt::format("{}", r.algbw_gbps), fmt::format("{}", r.busbw_gbps),
                              r.ideal_ms > 0 ? fmt::format("{}", r.ideal_ms) : ""});
        return renderTable(t, format);
    }
    t.headers = {"size",       "dtype",           "ranks",
                 "time ms",    "ranks' means ms", "one iteration ms",
                 "algbw GB/s", "busbw GB/s"};
    t.right = {true, false, true, true, true, true, true, true};
    if (ideal) {
        t.headers.push_back("ideal ms");
        t.right.push_back(true);
    }
    for (const auto& r : rows) {
        std::vector<std::string> cells = {
            dist::formatByteSize(r.bytes),
            dist::dtypeName(r.dtype),
            fmt::format("{} {}", r.world_size, dist::backendName(r.backend)),
            ms(r.time_ms),
            ms(r.rank_mean_min_ms) + "–" + ms(r.time_ms),
            ms(r.fastest_ms) + "–" + ms(r.slowest_ms),
            fmt::format("{:.2f}", r.algbw_gbps),
            fmt::format("{:.2f}", r.busbw_gbps)};
        if (ideal) cells.push_back(r.ideal_ms > 0 ? ms(r.ideal_ms) : "");
        t.rows.push_back(std::move(cells));
    }
    return tableHeading(heading, format) + renderTable(t, format);
}

std::string formatAllreduceFit(const std::vector<dist::AllreduceRow>& rows, TableFormat format) {
    std::vector<std::tuple<std::string, int, std::string>> keys;
    std::map<std::tuple<std::string, int, std::string>, std::vector<std::pair<int64_t, double>>>
        samples;
    for (const auto& r : rows) {
        const auto key = std::make_tuple(std::string(dist::backendName(r.backend)), r.world_size,
                                         std::string(dist::dtypeName(r.dtype)));
        if (!samples.count(key)) keys.push_back(key);
        samples[key].emplace_back(r.bytes, r.time_ms);
    }
    if (keys.empty() && format != TableFormat::Csv) return {};
    TextTable t;
    const bool csv = format == TableFormat::Csv;
    t.headers = csv ? std::vector<std::string>{"backend",    "world_size", "dtype",
                                               "points",     "alpha_ms",   "beta_gbps",
                                               "fit_rms_ms", "fit_r2",     "fit_through_origin"}
                    : std::vector<std::string>{"backend", "ranks",  "dtype",           "sizes",
                                               "α ms",    "β GB/s", "rms residual ms", "R²"};
    t.right = {false, true, false, true, true, true, true, true, false};
    if (!csv) t.right.resize(t.headers.size());
    for (const auto& key : keys) {
        const auto& [backend, world, dtype] = key;
        const dist::LatencyBandwidthFit f = dist::fitLatencyBandwidth(samples[key]);
        if (csv) {
            t.rows.push_back({backend, fmt::format("{}", world), dtype, fmt::format("{}", f.points),
                              f.ok ? csvNumber(f.alpha_ms) : "",
                              f.ok ? csvNumber(f.betaGbps()) : "",
                              f.ok ? csvNumber(f.rms_residual_ms) : "", f.ok ? csvNumber(f.r2) : "",
                              f.ok ? (f.through_origin ? "1" : "0") : ""});
        } else {
            t.rows.push_back(
                {backend, fmt::format("{}", world), dtype, fmt::format("{}", f.points),
                 f.ok ? fmt::format("{:.4f}{}", f.alpha_ms, f.through_origin ? " (origin)" : "")
                      : "-",
                 f.ok ? fmt::format("{:.3f}", f.betaGbps()) : "-",
                 f.ok ? fmt::format("{:.4f}", f.rms_residual_ms) : "-",
                 f.ok ? fmt::format("{:.4f}", f.r2) : "-"});
        }
    }
    if (csv) return renderTable(t, format);
    return tableHeading(
               "All-reduce fitted as t(n) = α + n/β (least squares over the sizes; β is the "
               "payload's bandwidth, algbw; (origin): the free line's α was below 0)",
               format) +
           renderTable(t, format);
}

std::string formatDdpComparison(const std::vector<DistributedResult>& results, TableFormat format) {
    if (format == TableFormat::Csv) return ddpCsv(results);
    TextTable t;
    t.headers = {"strategy", "bucket MiB", "sharded",  "precision", "ranks",  "step ms",
                 "± std",    "forward",    "backward", "comm wait", "hidden", "optimizer",
                 "sent MiB", "peak MiB",   "loss",     "check",     "status"};
    t.right = {false, true, false, false, true, true, true,  true, true,
               true,  true, true,  true,  true, true, false, false};
    for (const auto& r : results) {
        if (r.point.experiment != DistExperiment::Ddp) continue;
        const DdpSpec& d = r.point.ddp;
        const DdpSummary s = summarizeDdp(r);
        auto num = [&](double v) { return s.steps == 0 ? std::string("-") : ms(v); };
        const StrategyTraits traits = strategyTraits(d.strategy);
        const bool sharded_model = traits.sharded_model;
        // See Note [your DDP classes]: the course's check, where it ran.
        const std::string check = !r.check.ran     ? ""
                                  : r.check.passed ? fmt::format("pass {:.1e}", r.check.max_diff)
                                                   : fmt::format("FAIL {:.1e}", r.check.max_diff);
        // A compiled step (see Note [compiled data-parallel step]) is named so; its overlapped
        // strategies have no comm wait of their own ("—": inside backward).
        const std::string exec =
            d.exec == ExecMode::Eager ? "" : " " + std::string(toString(d.exec));
        t.rows.push_back(
            {(sharded_model && d.param_dtype != "fp32"
                  ? d.strategy + " " + d.param_dtype + " params"
                  : d.strategy) +
                 exec,
             traits.bucket_size ? fmt::format("{:g}", d.bucket_mb) : "", ddpShardingName(d),
             std::string(toString(d.precision)),
             fmt::format("{} {}", r.point.world_size, dist::backendName(r.point.backend)),
             num(s.step_ms), num(s.step_std_ms), num(s.forward_ms), num(s.backward_ms),
             s.steps > 0 && s.comm_wait_ms < 0 ? "—" : num(s.comm_wait_ms),
             s.hidden_share < 0 ? "n/a" : fmt::format("{:.0f}%", 100 * s.hidden_share),
             num(s.optimizer_ms), s.steps > 0 && s.sent_bytes > 0 ? mib(s.sent_bytes) : "n/a",
             s.memory_peak > 0 ? mib(s.memory_peak) : "n/a",
             s.steps > 0 ? fmt::format("{:.4f}", s.final_global_loss) : "-", check,
             r.status == Status::Ok ? "ok" : fmt::format("{}: {}", toString(r.status), r.error)});
    }
    return tableHeading(
               "DDP strategies (per step the slowest rank, mean over the measured steps; hidden: "
               "the share of communication that ran during backward; sent: the bytes a rank put "
               "on the wire per step, by the ring algorithms' counts)",
               format) +
           renderTable(t, format);
}

// Note [a step that varies]: the report says which points' steps varied and why such a step
// does, so that a reader compares what can be compared. Measured on 2 x H200 (docs/BENCHMARKS.md,
// "The whole GPU suite again, and where the eager bf16 DDP step's extra time goes"): the eager bf16
// step of the 2025 xl at 1,024 tokens a GPU keeps the GPU busy about a third of the step and waits
// on the host's kernel launches, so it follows the host's pace, which moves from step to step and
// from run to run (the one-GPU step's median ranged from 90 to 151 ms over nine runs on one
// machine, its backward at 51 ms for a stretch of steps and at 86 ms for the next); fp32's longer
// kernels keep a queue ahead of the host and vary by 0.3 ms. A compiled step (CUDA graphs) leaves
// the host out and varies by 0.2 ms at the same size. On Gloo the ranks compute on the CPU and
// share its cores. A point's steps "vary" when their standard deviation is 5% of their mean or
// more, over 3 measured steps or more (fewer say nothing about a spread).
std::string formatStepSpread(const std::vector<DistributedResult>& results, TableFormat format) {
    if (format == TableFormat::Csv) return {};
    std::vector<std::string> lines;
    bool eager_gpu = false, gloo = false, compiled = false;
    for (size_t i = 0; i < results.size(); ++i) {
        const DistributedResult& r = results[i];
        if (r.point.experiment != DistExperiment::Ddp || r.status != Status::Ok) continue;
        const DdpSummary s = summarizeDdp(r);
        if (s.steps < 3 || !(s.step_ms > 0) || s.step_std_ms < 0.05 * s.step_ms) continue;
        double lo = 0, hi = 0;
        bool any = false;
        std::map<int, double> slowest;  // per measured step, the slowest rank's total
        for (const auto& row : r.steps)
            if (!row.warmup) slowest[row.step] = std::max(slowest[row.step], row.total_ms);
        for (const auto& [step, t] : slowest) {
            lo = any ? std::min(lo, t) : t;
            hi = any ? std::max(hi, t) : t;
            any = true;
        }
        lines.push_back(fmt::format(
            "point {} ({}): ± {} ms around a mean of {} ms ({:.0f}%), median {} ms, from {} to {} "
            "ms over {} steps",
            i + 1, pointHeadline(r.point), ms(s.step_std_ms), ms(s.step_ms),
            100 * s.step_std_ms / s.step_ms, ms(s.step_median_ms), ms(lo), ms(hi), s.steps));
        if (r.point.backend == dist::CommBackend::Gloo)
            gloo = true;
        else if (r.point.ddp.exec == ExecMode::Compiled)
            compiled = true;
        else
            eager_gpu = true;
    }
    if (lines.empty()) return {};
    std::vector<std::string> why;
    if (eager_gpu)
        why.push_back(
            "An eager step of short kernels (bf16, few tokens a GPU) keeps the GPU waiting on the "
            "host's kernel launches, so it runs at the host's pace, which changes from step to "
            "step and from run to run; a one-GPU step of the same size varies as much. Compare "
            "medians, each beside a one-GPU step measured just before or after it, or run the "
            "step compiled (--exec compiled: replayed as CUDA graphs, without the host).");
    if (compiled)
        why.push_back(
            "A compiled step does not wait on the host: when it varies, look for other work on "
            "the GPUs or their clocks.");
    if (gloo)
        why.push_back(
            "On Gloo the ranks compute on the CPU and share its cores with each other and with "
            "the machine's other work: more measured steps, or a quieter machine, steady them.");
    std::string out = tableHeading("Steps that vary (5% or more of their mean)", format);
    for (const auto& l : lines)
        out += (format == TableFormat::Markdown ? "- " + markdownText(l) : "  " + l) + "\n";
    for (const auto& w : why)
        out += (format == TableFormat::Markdown ? "\n" + markdownText(w) : w) + "\n";
    return out;
}

std::string formatDdpChecks(const std::vector<DistributedResult>& results, TableFormat format) {
    TextTable t;
    t.headers = {"point", "class", "check", "largest difference", "tolerance", "what was found"};
    t.right = {false, false, false, true, false, false};
    for (const auto& r : results) {
        if (r.point.experiment != DistExperiment::Ddp || !r.check.ran) continue;
        t.rows.push_back({pointHeadline(r.point), r.what, r.check.passed ? "pass" : "FAIL",
                          fmt::format("{:.2e}", r.check.max_diff), r.check.tolerance,
                          r.check.message});
    }
    if (t.rows.empty()) return {};
    return tableHeading(
               "The course's check: after N SGD steps on one global batch, every rank's "
               "parameters against single-process training",
               format) +
           renderTable(t, format);
}

std::string formatDdpMemory(const std::vector<DistributedResult>& results, TableFormat format) {
    TextTable t;
    t.headers = {
        "point",       "rank",        "parameters MiB", "gradients MiB",  "optimizer state MiB",
        "buffers MiB", "after model", "after forward",  "after backward", "after optimizer",
        "peak"};
    t.right = {false, true, true, true, true, true, true, true, true, true, true};
    for (const auto& r : results) {
        if (r.point.experiment != DistExperiment::Ddp) continue;
        // Each rank's last measured step.
        std::vector<const DdpStepRow*> last(static_cast<size_t>(r.point.world_size), nullptr);
        for (const auto& row : r.steps)
            if (row.rank >= 0 && row.rank < r.point.world_size) last[row.rank] = &row;
        for (const DdpStepRow* row : last) {
            if (!row) continue;
            auto device = [&](int64_t b) { return b > 0 ? mib(b) : std::string("n/a"); };
            t.rows.push_back({pointHeadline(r.point), fmt::format("{}", row->rank),
                              mib(row->parameter_bytes), mib(row->gradient_bytes),
                              mib(row->optimizer_state_bytes), mib(row->comm_buffer_bytes),
                              device(row->memory_after_model), device(row->memory_after_forward),
                              device(row->memory_after_backward),
                              device(row->memory_after_optimizer), device(row->memory_peak)});
        }
    }
    return tableHeading("Memory per rank (tensors exactly; the allocator's bytes on a GPU, MiB)",
                        format) +
           renderTable(t, format);
}

std::string formatFsdpCommunication(const std::vector<DistributedResult>& results,
                                    TableFormat format) {
    if (format == TableFormat::Csv) return fsdpCsv(results);
    TextTable t;
    t.headers = {"point",
                 "forward ms",
                 "all-gather ms",
                 "waited in forward",
                 "waited in backward",
                 "reduce-scatter ms",
                 "gathered MiB",
                 "reduced MiB",
                 "units held"};
    t.right = {false, true, true, true, true, true, true, true, true};
    for (const auto& r : results) {
        if (r.point.experiment != DistExperiment::Ddp || r.point.ddp.strategy != "fsdp") continue;
        const DdpSummary s = summarizeDdp(r);
        if (s.steps == 0) continue;
        auto num = [&](double v) { return v < 0 ? std::string("n/a") : ms(v); };
        t.rows.push_back({pointHeadline(r.point), num(s.forward_ms), num(s.gather_ms),
                          num(s.gather_wait_forward_ms), num(s.gather_wait_backward_ms),
                          num(s.reduce_scatter_ms), mib(s.gather_bytes),
                          mib(s.reduce_scatter_bytes), fmt::format("{}", s.units_gathered)});
    }
    if (t.rows.empty()) return {};
    return tableHeading(
               "Fully sharded: the all-gathers against the forward pass (per step, the slowest "
               "rank; waited: how long compute stood still for weights not yet gathered; "
               "all-gather and reduce-scatter: the collectives' device time, all of a step's)",
               format) +
           renderTable(t, format);
}

std::string formatBucketTimes(const std::vector<DistributedResult>& results, TableFormat format) {
    TextTable t;
    if (format == TableFormat::Csv) {
        // See Note [tables other programs read]: every rank's every step, one row a bucket.
        t.headers = {"point",
                     "strategy",
                     "bucket_mb",
                     "rank",
                     "step",
                     "warmup",
                     "bucket",
                     "bytes",
                     "params",
                     "ready_ms",
                     "launch_ms",
                     "end_ms",
                     "backward_start_ms",
                     "backward_end_ms"};
        for (size_t i = 0; i < results.size(); ++i) {
            const DistributedResult& r = results[i];
            if (r.point.experiment != DistExperiment::Ddp) continue;
            const StrategyTraits traits = strategyTraits(r.point.ddp.strategy);
            for (const auto& row : r.steps)
                for (const auto& b : row.buckets)
                    t.rows.push_back({fmt::format("{}", i + 1), r.point.ddp.strategy,
                                      traits.bucket_size ? csvNumber(r.point.ddp.bucket_mb) : "",
                                      fmt::format("{}", row.rank), fmt::format("{}", row.step),
                                      row.warmup ? "1" : "0", fmt::format("{}", b.index),
                                      fmt::format("{}", b.bytes), fmt::format("{}", b.params),
                                      csvNumber(b.ready_ms), csvNumber(b.launch_ms),
                                      csvNumber(b.end_ms), csvNumber(row.forward_ms),
                                      csvNumber(row.forward_ms + row.backward_ms)});
        }
        return renderTable(t, format);
    }
    const auto buckets = bucketSummaries(results);
    if (buckets.empty()) return {};
    t.headers = {"point",    "bucket", "MiB",        "params",        "ready",
                 "launched", "done",   "all-reduce", "backward ends", "hidden"};
    t.right = {false, true, true, true, true, true, true, true, true, true};
    for (const auto& b : buckets) {
        const double span = b.end_ms - b.launch_ms;
        t.rows.push_back({fmt::format("{}: {}", b.point + 1, pointHeadline(results[b.point].point)),
                          fmt::format("{}", b.index),
                          fmt::format("{:.2f}", b.bytes / (1024.0 * 1024.0)),
                          fmt::format("{}", b.params), ms(b.ready_ms), ms(b.launch_ms),
                          ms(b.end_ms), ms(span), ms(b.backward_end_ms),
                          span > 0 ? fmt::format("{:.0f}%", 100 * b.hidden_ms / span) : "-"});
    }
    return tableHeading(
               "Buckets (ms from the step's start, the mean over ranks and measured steps; ready: "
               "its last gradient accumulated; hidden: the share of its all-reduce before "
               "backward's end)",
               format) +
           renderTable(t, format);
}

namespace {

std::string bucketModelCsv(const std::vector<DistributedResult>& results) {
    TextTable t;
    t.headers = {
        "configuration",  "backend",          "world_size",   "fit_source", "fit_points",
        "alpha_ms",       "beta_gbps",        "fit_rms_ms",   "fit_r2",     "fit_through_origin",
        "gradient_bytes", "backward_ms",      "row",          "point",      "bucket_mb",
        "buckets",        "measured_buckets", "predicted_ms", "measured_ms"};
    for (const auto& m : bucketModels(results)) {
        auto add = [&](const std::string& kind, int point, double mib, int buckets,
                       int measured_buckets, double predicted, double measured) {
            const bool fitted = m.fit.ok;
            t.rows.push_back(
                {m.label, dist::backendName(m.backend), fmt::format("{}", m.world_size),
                 m.fit_source, fmt::format("{}", m.fit.points),
                 fitted ? csvNumber(m.fit.alpha_ms) : "", fitted ? csvNumber(m.fit.betaGbps()) : "",
                 fitted ? csvNumber(m.fit.rms_residual_ms) : "", fitted ? csvNumber(m.fit.r2) : "",
                 fitted ? (m.fit.through_origin ? "1" : "0") : "",
                 fmt::format("{}", m.gradient_bytes),
                 m.profile_point >= 0 ? csvNumber(m.backward_ms) : "", kind,
                 point >= 0 ? fmt::format("{}", point + 1) : "", csvNumber(mib),
                 buckets > 0 ? fmt::format("{}", buckets) : "",
                 measured_buckets > 0 ? fmt::format("{}", measured_buckets) : "",
                 m.problem.empty() ? csvNumber(predicted) : "",
                 measured >= 0 ? csvNumber(measured) : ""});
        };
        for (const auto& p : m.measured)
            add("measured", p.point, p.bucket_mb, p.buckets, p.measured_buckets, p.predicted_ms,
                p.measured_ms);
        if (m.problem.empty()) {
            add("optimal", -1, m.optimal_mb, 0, 0, m.optimal_ms, -1);
            for (const auto& [mib, ms] : m.curve) add("curve", -1, mib, 0, 0, ms, -1);
        }
    }
    return renderTable(t, TableFormat::Csv);
}

}  // namespace

std::string formatBucketModel(const std::vector<DistributedResult>& results, TableFormat format) {
    if (format == TableFormat::Csv) return bucketModelCsv(results);
    std::string out;
    for (const auto& m : bucketModels(results)) {
        if (!out.empty()) out += "\n";
        if (!m.problem.empty()) {
            out += tableHeading(fmt::format("Bucket-size model, {}", m.label), format) +
                   (format == TableFormat::Markdown ? markdownText(m.problem) : m.problem) + "\n";
            continue;
        }
        const std::string fit = fmt::format(
            "t(n) = {:.3f} ms + n / {:.3f} GB/s, fitted to {} {}{} (rms residual {:.3f} ms, R² "
            "{:.3f}); backward {} ms (point {}), gradients {} MiB; least wait after backward {} "
            "ms at {:.3g} MiB (the course's closed form sqrt(s·α·β): {:.3g} MiB)",
            m.fit.alpha_ms, m.fit.betaGbps(), m.fit.points,
            m.fit_source == "all-reduce sweep" ? "all-reduce rows" : "bucket all-reduces",
            m.fit.through_origin
                ? " through the origin (the free line's latency was below 0 or its time did not "
                  "grow with size)"
                : "",
            m.fit.rms_residual_ms, m.fit.r2, ms(m.backward_ms), m.profile_point + 1,
            mib(m.gradient_bytes), ms(m.optimal_ms), m.optimal_mb, m.course_optimal_mb);
        TextTable t;
        t.headers = {"bucket MiB", "buckets", "predicted wait ms", "measured wait ms",
                     "measured − predicted"};
        t.right = {true, true, true, true, true};
        for (const auto& p : m.measured)
            t.rows.push_back({fmt::format("{:g}", p.bucket_mb),
                              p.measured_buckets > 0 && p.measured_buckets != p.buckets
                                  ? fmt::format("{} (ran {})", p.buckets, p.measured_buckets)
                                  : fmt::format("{}", p.buckets),
                              ms(p.predicted_ms), p.measured_ms >= 0 ? ms(p.measured_ms) : "-",
                              p.measured_ms >= 0
                                  ? fmt::format("{:+.3f}", p.measured_ms - p.predicted_ms)
                                  : "-"});
        out += tableHeading(fmt::format("Bucket-size model, {}", m.label), format) +
               (format == TableFormat::Markdown ? markdownText(fit) : fit) + "\n" +
               (format == TableFormat::Markdown ? "\n" : "") + renderTable(t, format);
    }
    return out;
}

nlohmann::json bucketModelJson(const BucketModel& m) {
    nlohmann::json measured = nlohmann::json::array(), curve = nlohmann::json::array();
    for (const auto& p : m.measured)
        measured.push_back({{"point", p.point + 1},
                            {"bucket_mb", p.bucket_mb},
                            {"buckets", p.buckets},
                            {"measured_buckets", p.measured_buckets},
                            {"predicted_ms", p.predicted_ms},
                            {"measured_ms", p.measured_ms >= 0 ? nlohmann::json(p.measured_ms)
                                                               : nlohmann::json(nullptr)}});
    for (const auto& [mib, ms] : m.curve) curve.push_back({mib, ms});
    return {{"type", "bucket_model"},
            {"configuration", m.label},
            {"backend", dist::backendName(m.backend)},
            {"world_size", m.world_size},
            {"fit_source", m.fit_source},
            {"fit",
             {{"ok", m.fit.ok},
              {"points", m.fit.points},
              {"alpha_ms", m.fit.alpha_ms},
              {"beta_gbps", m.fit.betaGbps()},
              {"rms_residual_ms", m.fit.rms_residual_ms},
              {"r2", m.fit.r2},
              {"through_origin", m.fit.through_origin}}},
            {"profile_point", m.profile_point + 1},
            {"gradient_bytes", m.gradient_bytes},
            {"backward_ms", m.backward_ms},
            {"measured", measured},
            {"curve", curve},
            {"optimal_mb", m.optimal_mb},
            {"optimal_ms", m.optimal_ms},
            {"course_optimal_mb", m.course_optimal_mb},
            {"problem", m.problem}};
}

std::string formatDistributed(const std::vector<DistributedResult>& results, TableFormat format) {
    std::string out;
    for (size_t i = 0; i < results.size(); ++i)
        if (results[i].status != Status::Ok)
            out += fmt::format("point {} ({}): {}: {}\n", i + 1, pointHeadline(results[i].point),
                               toString(results[i].status), results[i].error);
    if (!out.empty()) out += "\n";
    std::vector<dist::AllreduceRow> rows;
    bool ddp = false;
    for (const auto& r : results) {
        rows.insert(rows.end(), r.allreduce.begin(), r.allreduce.end());
        ddp = ddp || r.point.experiment == DistExperiment::Ddp;
    }
    if (!rows.empty()) {
        // "All-reduce, 2 × nccl" where every row has the same ranks.
        const bool one = std::all_of(rows.begin(), rows.end(), [&](const auto& r) {
            return r.world_size == rows.front().world_size && r.backend == rows.front().backend;
        });
        const std::string ranks = one ? fmt::format(", {} × {}", rows.front().world_size,
                                                    dist::backendName(rows.front().backend))
                                      : "";
        out +=
            formatAllreduceRows(
                rows, format,
                fmt::format("All-reduce{} (time: the slowest rank's mean; busbw = algbw·2(n−1)/n)",
                            ranks)) +
            "\n" + formatAllreduceFit(rows, format) + "\n";
    }
    if (ddp && format == TableFormat::Markdown) {
        // The settings every DDP point shares, which the tables leave out.
        // See Note [tables other programs read].
        std::vector<std::string> items;
        auto shared = [&](const char* name, auto get) {
            std::optional<std::string> value;
            for (const auto& r : results) {
                if (r.point.experiment != DistExperiment::Ddp) continue;
                const std::string v = fmt::format("{}", get(r.point.ddp));
                if (value && *value != v) return;
                value = v;
            }
            if (value) items.push_back(fmt::format("{} {}", name, *value));
        };
        shared("size", [](const DdpSpec& d) { return d.model_size; });
        shared("context length", [](const DdpSpec& d) { return d.context_length; });
        shared("batch per rank", [](const DdpSpec& d) { return d.batch_per_rank; });
        shared("warm-up steps", [](const DdpSpec& d) { return d.warmup_steps; });
        shared("measured steps", [](const DdpSpec& d) { return d.measured_steps; });
        shared("attention", [](const DdpSpec& d) { return toString(d.attention); });
        out +=
            markdownText(fmt::format("Settings of every DDP point: {}.", fmt::join(items, ", "))) +
            "\n";
    }
    if (ddp) out += formatDdpComparison(results, format) + "\n" + formatDdpMemory(results, format);
    if (const std::string spread = formatStepSpread(results, format); !spread.empty())
        out += "\n" + spread;
    if (const std::string checks = formatDdpChecks(results, format); !checks.empty())
        out += "\n" + checks;
    if (const std::string fsdp = formatFsdpCommunication(results, format); !fsdp.empty())
        out += "\n" + fsdp;
    if (const std::string buckets = formatBucketTimes(results, format); !buckets.empty())
        out += "\n" + buckets;
    if (const std::string model = formatBucketModel(results, format); !model.empty())
        out += "\n" + model;
    return out;
}

namespace {

// See Note [tables other programs read]: the strategies, one row a DDP point.
std::string ddpCsv(const std::vector<DistributedResult>& results) {
    TextTable t;
    t.headers = {"point",
                 "strategy",
                 "param_dtype",
                 "bucket_mb",
                 "sharded",
                 "precision",
                 "size",
                 "context_length",
                 "batch_per_rank",
                 "world_size",
                 "backend",
                 "steps",
                 "step_ms",
                 "step_std_ms",
                 "forward_ms",
                 "backward_ms",
                 "comm_wait_ms",
                 "hidden_ms",
                 "hidden_share",
                 "optimizer_ms",
                 "comm_bytes",
                 "broadcast_bytes",
                 "reduce_scatter_bytes",
                 "gather_bytes",
                 "sent_bytes",
                 "peak_memory_bytes",
                 "final_loss",
                 "check_passed",
                 "check_max_diff",
                 "status",
                 "error",
                 "exec"};
    for (size_t i = 0; i < results.size(); ++i) {
        const DistributedResult& r = results[i];
        if (r.point.experiment != DistExperiment::Ddp) continue;
        const DdpSpec& d = r.point.ddp;
        const DdpSummary s = summarizeDdp(r);
        const StrategyTraits traits = strategyTraits(d.strategy);
        const bool measured = s.steps > 0;
        auto ms = [&](double v) { return measured && v >= 0 ? csvNumber(v) : std::string(); };
        t.rows.push_back({fmt::format("{}", i + 1),
                          d.strategy,
                          d.param_dtype,
                          traits.bucket_size ? csvNumber(d.bucket_mb) : "",
                          traits.sharded_model    ? "all"
                          : d.strategy == "zero1" ? "reduce-scatter"
                                                  : (d.shard_optimizer ? "yes" : "no"),
                          std::string(toString(d.precision)),
                          d.model_size,
                          fmt::format("{}", d.context_length),
                          fmt::format("{}", d.batch_per_rank),
                          fmt::format("{}", r.point.world_size),
                          dist::backendName(r.point.backend),
                          fmt::format("{}", s.steps),
                          ms(s.step_ms),
                          ms(s.step_std_ms),
                          ms(s.forward_ms),
                          ms(s.backward_ms),
                          ms(s.comm_wait_ms),
                          ms(s.hidden_ms),
                          measured && s.hidden_share >= 0 ? csvNumber(s.hidden_share) : "",
                          ms(s.optimizer_ms),
                          measured ? fmt::format("{}", s.comm_bytes) : "",
                          measured ? fmt::format("{}", s.broadcast_bytes) : "",
                          measured ? fmt::format("{}", s.reduce_scatter_bytes) : "",
                          measured ? fmt::format("{}", s.gather_bytes) : "",
                          measured && s.sent_bytes > 0 ? fmt::format("{}", s.sent_bytes) : "",
                          s.memory_peak > 0 ? fmt::format("{}", s.memory_peak) : "",
                          measured ? csvNumber(s.final_global_loss) : "",
                          r.check.ran ? (r.check.passed ? "1" : "0") : "",
                          r.check.ran ? csvNumber(r.check.max_diff) : "",
                          std::string(toString(r.status)),
                          r.error,
                          std::string(toString(d.exec))});
    }
    return renderTable(t, TableFormat::Csv);
}

// Each rank of each DDP point, its last measured step: tensors exactly, the allocator's bytes.
std::string ddpMemoryCsv(const std::vector<DistributedResult>& results) {
    TextTable t;
    t.headers = {"point",
                 "strategy",
                 "rank",
                 "parameter_bytes",
                 "gradient_bytes",
                 "optimizer_state_bytes",
                 "comm_buffer_bytes",
                 "memory_after_model_bytes",
                 "memory_after_forward_bytes",
                 "memory_after_backward_bytes",
                 "memory_after_optimizer_bytes",
                 "memory_peak_bytes"};
    auto device = [](int64_t b) { return b > 0 ? fmt::format("{}", b) : std::string(); };
    for (size_t i = 0; i < results.size(); ++i) {
        const DistributedResult& r = results[i];
        if (r.point.experiment != DistExperiment::Ddp) continue;
        std::vector<const DdpStepRow*> last(static_cast<size_t>(r.point.world_size), nullptr);
        for (const auto& row : r.steps)
            if (row.rank >= 0 && row.rank < r.point.world_size) last[row.rank] = &row;
        for (const DdpStepRow* row : last) {
            if (!row) continue;
            t.rows.push_back(
                {fmt::format("{}", i + 1), r.point.ddp.strategy, fmt::format("{}", row->rank),
                 fmt::format("{}", row->parameter_bytes), fmt::format("{}", row->gradient_bytes),
                 fmt::format("{}", row->optimizer_state_bytes),
                 fmt::format("{}", row->comm_buffer_bytes), device(row->memory_after_model),
                 device(row->memory_after_forward), device(row->memory_after_backward),
                 device(row->memory_after_optimizer), device(row->memory_peak)});
        }
    }
    return renderTable(t, TableFormat::Csv);
}

std::string fsdpCsv(const std::vector<DistributedResult>& results) {
    TextTable t;
    t.headers = {"point",
                 "forward_ms",
                 "gather_ms",
                 "gather_wait_forward_ms",
                 "gather_wait_backward_ms",
                 "reduce_scatter_ms",
                 "gather_bytes",
                 "reduce_scatter_bytes",
                 "units_gathered"};
    for (size_t i = 0; i < results.size(); ++i) {
        const DistributedResult& r = results[i];
        if (r.point.experiment != DistExperiment::Ddp || r.point.ddp.strategy != "fsdp") continue;
        const DdpSummary s = summarizeDdp(r);
        if (s.steps == 0) continue;
        auto ms = [](double v) { return v < 0 ? std::string() : csvNumber(v); };
        t.rows.push_back({fmt::format("{}", i + 1), ms(s.forward_ms), ms(s.gather_ms),
                          ms(s.gather_wait_forward_ms), ms(s.gather_wait_backward_ms),
                          ms(s.reduce_scatter_ms), fmt::format("{}", s.gather_bytes),
                          fmt::format("{}", s.reduce_scatter_bytes),
                          fmt::format("{}", s.units_gathered)});
    }
    return renderTable(t, TableFormat::Csv);
}

std::string checksCsv(const std::vector<DistributedResult>& results) {
    TextTable t;
    t.headers = {"point", "what", "passed", "max_diff", "tolerance", "message"};
    for (size_t i = 0; i < results.size(); ++i) {
        const DistributedResult& r = results[i];
        if (r.point.experiment != DistExperiment::Ddp || !r.check.ran) continue;
        t.rows.push_back({fmt::format("{}", i + 1), r.what, r.check.passed ? "1" : "0",
                          csvNumber(r.check.max_diff), r.check.tolerance, r.check.message});
    }
    return renderTable(t, TableFormat::Csv);
}

}  // namespace

std::vector<CsvTable> distributedCsvTables(const std::vector<DistributedResult>& results) {
    std::vector<dist::AllreduceRow> rows;
    bool ddp = false, fsdp = false, checks = false, buckets = false, bucketed = false;
    for (const auto& r : results) {
        rows.insert(rows.end(), r.allreduce.begin(), r.allreduce.end());
        const bool is_ddp = r.point.experiment == DistExperiment::Ddp;
        ddp = ddp || is_ddp;
        fsdp = fsdp || (is_ddp && r.point.ddp.strategy == "fsdp");
        checks = checks || (is_ddp && r.check.ran);
        bucketed = bucketed || (is_ddp && r.point.ddp.strategy == "bucketed");
        for (const auto& s : r.steps) buckets = buckets || !s.buckets.empty();
    }
    std::vector<CsvTable> out;
    if (ddp) {
        out.push_back({"strategies", ddpCsv(results)});
        out.push_back({"memory", ddpMemoryCsv(results)});
        if (fsdp) out.push_back({"fsdp", fsdpCsv(results)});
        if (checks) out.push_back({"checks", checksCsv(results)});
        if (buckets) out.push_back({"buckets", formatBucketTimes(results, TableFormat::Csv)});
        if (bucketed) out.push_back({"bucket-model", bucketModelCsv(results)});
    }
    if (!rows.empty() || !ddp) {
        out.push_back({"allreduce", formatAllreduceRows(rows, TableFormat::Csv, "")});
        out.push_back({"allreduce-fit", formatAllreduceFit(rows, TableFormat::Csv)});
    }
    return out;
}

nlohmann::json ddpSummaryJson(const DistributedResult& r) {
    const DdpSummary s = summarizeDdp(r);
    const DdpSpec& d = r.point.ddp;
    nlohmann::json j = {{"type", "ddp"},
                        {"strategy", d.strategy},
                        {"bucket_mb", d.bucket_mb},
                        {"sharded", d.shard_optimizer},
                        {"sharding", ddpShardingName(d)},
                        {"exec", toString(d.exec)},
                        {"comm_bytes", s.comm_bytes},
                        {"broadcast_bytes", s.broadcast_bytes},
                        {"sent_bytes", s.sent_bytes},
                        {"precision", toString(d.precision)},
                        {"size", d.model_size},
                        {"context_length", d.context_length},
                        {"batch_per_rank", d.batch_per_rank},
                        {"backend", dist::backendName(r.point.backend)},
                        {"world_size", r.point.world_size},
                        {"steps", s.steps},
                        {"step_ms", s.step_ms},
                        {"step_std_ms", s.step_std_ms},
                        {"step_median_ms", s.step_median_ms},
                        {"forward_ms", s.forward_ms},
                        {"backward_ms", s.backward_ms},
                        {"comm_wait_ms", s.comm_wait_ms},
                        {"hidden_ms", s.hidden_ms},
                        {"hidden_share", s.hidden_share},
                        {"optimizer_ms", s.optimizer_ms},
                        {"memory_peak", s.memory_peak},
                        {"parameter_bytes", s.parameter_bytes},
                        {"gradient_bytes", s.gradient_bytes},
                        {"optimizer_state_bytes", s.optimizer_state_bytes},
                        {"param_dtype", d.param_dtype},
                        {"gather_ms", s.gather_ms},
                        {"reduce_scatter_ms", s.reduce_scatter_ms},
                        {"gather_wait_forward_ms", s.gather_wait_forward_ms},
                        {"gather_wait_backward_ms", s.gather_wait_backward_ms},
                        {"gather_bytes", s.gather_bytes},
                        {"reduce_scatter_bytes", s.reduce_scatter_bytes},
                        {"units_gathered", s.units_gathered},
                        {"final_global_loss", s.final_global_loss},
                        {"status", toString(r.status)},
                        {"error", r.error}};
    // See Note [your DDP classes]: what ran, and the course's check.
    if (!r.what.empty()) j["what"] = r.what;
    if (!r.traceback.empty()) j["traceback"] = r.traceback;
    if (!r.trace_file.empty()) j["trace"] = r.trace_file;
    if (r.check.ran)
        j["check"] = {{"passed", r.check.passed},
                      {"max_diff", r.check.max_diff},
                      {"steps", r.check.steps},
                      {"tolerance", r.check.tolerance},
                      {"message", r.check.message}};
    return j;
}

namespace {

std::string distributedRunReport(const RunInfo& info, const std::vector<StoredRow>& rows,
                                 ReportFormat format) {
    const auto results = distributedResultsFromRows(info, rows);
    if (format == ReportFormat::Json) {
        nlohmann::json points = nlohmann::json::array();
        for (const auto& r : results) {
            nlohmann::json p = toJson(r.point);
            p["status"] = toString(r.status);
            p["error"] = r.error;
            p["failed_rank"] = r.failed_rank;
            if (std::any_of(r.rank_nodes.begin(), r.rank_nodes.end(),
                            [](const std::string& n) { return !n.empty(); }))
                p["nodes"] = r.rank_nodes;  // under torchrun or srun
            if (!r.trace_file.empty())
                p["trace"] = r.trace_file;  // See Note [one trace of every rank]
            nlohmann::json steps = nlohmann::json::array(), allreduce = nlohmann::json::array();
            for (const auto& s : r.steps) steps.push_back(toJson(s));
            for (const auto& a : r.allreduce) allreduce.push_back(toJson(a));
            p["steps"] = steps;
            p["allreduce"] = allreduce;
            if (r.point.experiment == DistExperiment::Ddp) p["summary"] = ddpSummaryJson(r);
            points.push_back(p);
        }
        nlohmann::json models = nlohmann::json::array();
        for (const auto& m : bucketModels(results)) models.push_back(bucketModelJson(m));
        nlohmann::json run = {{"id", info.id},
                              {"kind", info.lab},
                              {"label", info.label},
                              {"created", info.created},
                              {"points", points}};
        if (!models.empty()) run["bucket_models"] = models;
        return dumpJson(run, 2) + "\n";
    }
    const TableFormat tf = format == ReportFormat::Markdown ? TableFormat::Markdown
                           : format == ReportFormat::Csv    ? TableFormat::Csv
                                                            : TableFormat::Text;
    if (tf == TableFormat::Csv) return distributedCsvTables(results).front().csv;
    std::string out;
    if (format == ReportFormat::Table) out = runHeadline(info, results.size(), "point") + "\n";
    if (format == ReportFormat::Markdown)
        out = fmt::format("# TrainScope run {}{}\n\n", info.id,
                          info.label.empty() ? "" : " — " + markdownText(info.label));
    out += formatDistributed(results, tf);
    if (!results.empty()) out += "\n" + formatEnvironment(results.front().environment, tf);
    return out;
}

}  // namespace

Lab distributedLab() {
    Lab lab{kDistributedLab, "Distributed", distributedRunReport,
            [](const StoredRow& row) { return distributedRowProblem(row); }};
    lab.csv_tables = [](const RunInfo& info, const std::vector<StoredRow>& rows) {
        return distributedCsvTables(distributedResultsFromRows(info, rows));
    };
    return lab;
}

}  // namespace ts
