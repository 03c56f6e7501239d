#include "ui/distributed/distributedpanel.h"

#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLineEdit>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QVBoxLayout>
#include <cmath>
#include <set>

#include "runtime/environment.h"
#include "ui/common/codechoice.h"
#include "ui/common/format.h"
#include "ui/distributed/distributeditems.h"
#include "ui/distributed/distributedstore.h"

namespace ts::ui {

namespace {

constexpr int kMaxCpuRanks = 16;
const QStringList kDtypes{QStringLiteral("fp32"), QStringLiteral("bf16")};
const QStringList kPrecisions{QStringLiteral("fp32"), QStringLiteral("bf16")};

// The strategies ticked in the panel: TrainScope's and PyTorch's. The user's (yours-*) come
// from the Code box: those their adapters define (see Note [your DDP classes]).
QStringList strategyNames() {
    QStringList out;
    for (const auto& s : ddpStrategyNames())
        if (!strategyTraits(s).users) out << qstr(s);
    return out;
}

// The engine's distributed observer, forwarded to the job's: every call an item for the view
// (steps as they arrive, the point's result once it is stored); the view writes the points'
// log lines, the engine its own.
class DistributedForwarder final : public DistributedObserver {
public:
    explicit DistributedForwarder(JobObserver& out) : out_(out) {}
    void pointStarted(int index, int count, const DistributedPoint& p) override {
        out_.item(QVariant::fromValue(DistPointStarted{index, count, p}));
    }
    void rankReady(int index, int rank, const std::string& device) override {
        out_.item(QVariant::fromValue(DistRankReady{index, rank, device}));
    }
    void ddpStep(int index, const DdpStepRow& row) override {
        out_.item(QVariant::fromValue(DistStep{index, row}));
    }
    void allreduceMeasured(int index, const dist::AllreduceRow& row) override {
        out_.item(QVariant::fromValue(DistAllreduce{index, row}));
    }
    void pointFinished(int index, const DistributedResult& r) override {
        out_.item(QVariant::fromValue(DistPointFinished{index, r}));
    }
    void progress(double fraction, double eta) override { out_.progress(fraction, eta); }
    void log(LogLevel level, const std::string& message) override { out_.log(level, message); }

private:
    JobObserver& out_;
};

QStringList listItems(const QString& text) {
    QStringList out;
    for (const QString& t :
         text.split(QRegularExpression(QStringLiteral("[,;]")), Qt::SkipEmptyParts)) {
        const QString s = t.trimmed();
        if (!s.isEmpty()) out << s;
    }
    return out;
}

QString numberText(double v) { return QString::number(v, 'g', 12); }

}  // namespace

void registerDistributedMetaTypes() {
    qRegisterMetaType<DistPointStarted>();
    qRegisterMetaType<DistRankReady>();
    qRegisterMetaType<DistStep>();
    qRegisterMetaType<DistAllreduce>();
    qRegisterMetaType<DistPointFinished>();
}

DistributedPanel::DistributedPanel(QWidget* parent) : LabPanel(parent) {
    registerDistributedMetaTypes();
    auto* outer = new QVBoxLayout(this);
    outer->setContentsMargins(6, 6, 6, 6);
    addLabelRow(outer, tr("optional; shown in the log and exports"));

    auto* ranksBox = new QGroupBox(tr("Ranks"), this);
    auto* rform = new QFormLayout(ranksBox);
    backend_ = addCombo(rform, QStringLiteral("backend"), tr("&Backend:"),
                        {{tr("gloo — CPU processes"), QStringLiteral("gloo"), {}},
                         {tr("nccl — one GPU a rank"), QStringLiteral("nccl"), {}}},
                        QStringLiteral("gloo"));
    world_ = addSpin(rform, QStringLiteral("world"), tr("&World size:"), 1, kMaxCpuRanks, 2,
                     tr("How many ranks (worker processes) to launch"));
    // Read once the backend set its limit, which may be below the state's.
    field(QStringLiteral("world")).late = true;
    field(QStringLiteral("world")).load = [this](const QJsonObject& o, QStringList* notes) {
        if (!o.contains(QLatin1String("world"))) return;
        const int want = o.value(QLatin1String("world")).toInt(world_->value());
        world_->setValue(want);
        if (world_->value() != want && notes)
            *notes << tr("world size %1 is more than this machine allows; using %2")
                          .arg(want)
                          .arg(world_->value());
    };
    experiment_ =
        addCombo(rform, QStringLiteral("experiment"), tr("&Experiment:"),
                 {{tr("all-reduce bandwidth"), QStringLiteral("allreduce"), {}},
                  {tr("DDP training step"), QStringLiteral("ddp"), {}},
                  {tr("DDP, optimizer sharded vs not"), QStringLiteral("ddp-sharding"), {}}},
                 QStringLiteral("ddp"));
    outer->addWidget(ranksBox);

    allreduceBox_ = new QGroupBox(tr("All-reduce"), this);
    auto* aform = new QFormLayout(allreduceBox_);
    sizes_ =
        addText(aform, QStringLiteral("sizes"), tr("&Sizes:"), QStringLiteral("1MB, 16MB, 64MB"),
                tr("Bytes of each rank's tensor, e.g. 1MB, 16MB, 64MB, 256MB, 1GB (MB = "
                   "10^6, MiB = 2^20)"));
    QList<Choice> dtypes;
    for (const QString& d : kDtypes) dtypes.push_back({d, d, {}});
    dtypeRow_ = addChecks(aform, QStringLiteral("dtypes"), tr("&Dtypes:"), dtypes, kDtypes);
    arWarmup_ = addSpin(aform, QStringLiteral("ar_warmup"), tr("&Warm-up:"), 0, 10000, 5,
                        tr("Untimed all-reduces before each size"));
    arIters_ = addSpin(aform, QStringLiteral("ar_iters"), tr("&Iterations:"), 1, 100000, 20,
                       tr("Timed all-reduces per size and dtype"));
    arSweepWorld_ =
        addCheck(aform, QStringLiteral("ar_sweep_world"),
                 tr("also at 2, 4, … ranks up to the world size"), false,
                 tr("One point per world size (2, 4, 6, … and the world size itself): the chart's "
                    "series per world size show how the bus bandwidth scales"));
    outer->addWidget(allreduceBox_);

    ddpBox_ = new QGroupBox(tr("DDP"), this);
    auto* dform = new QFormLayout(ddpBox_);
    QList<Choice> models;
    for (const auto& name : modelPresetNames())
        models.push_back({presetLabel(name), qstr(name), presetTooltip(name)});
    model_ = addCombo(dform, QStringLiteral("model"), tr("&Model size:"), models,
                      QStringLiteral("tiny"));
    context_ = addSpin(dform, QStringLiteral("context"), tr("&Context length:"), 1, 1 << 20, 128);
    batch_ = addSpin(dform, QStringLiteral("batch"), tr("Batch per &rank:"), 1, 1 << 16, 4,
                     tr("Rows each rank trains on; the global batch is this × the world size"));
    QList<Choice> precisions;
    for (const QString& p : kPrecisions) precisions.push_back({p, p, {}});
    precisionRow_ = addChecks(dform, QStringLiteral("precisions"), tr("&Precisions:"), precisions,
                              {QStringLiteral("fp32")});
    const QHash<QString, QString> strategyTips = {
        {QStringLiteral("naive"), tr("A blocking all-reduce per gradient after backward")},
        {QStringLiteral("flat"), tr("Every gradient copied into one flat buffer, one all-reduce")},
        {QStringLiteral("overlap"),
         tr("An asynchronous all-reduce per gradient, started from its hook during backward")},
        {QStringLiteral("bucketed"),
         tr("Gradients in buckets (a 1 MiB first one), each all-reduced once it is full, during "
            "backward")},
        {QStringLiteral("fsdp"),
         tr("Fully sharded: each rank keeps 1/N of every block's weights, gathers a block's whole "
            "weights just before it runs (prefetched) and frees them after; gradients "
            "reduce-scattered; the optimizer's state sharded too")},
        {QStringLiteral("fsdp2"), tr("PyTorch's FSDP2 (fully_shard, each block a unit) on the same "
                                     "model, in Python: the reference for fsdp")},
        {QStringLiteral("zero1"),
         tr("ZeRO stage 1 as DeepSpeed does it: gradients reduce-scattered, each rank steps its "
            "slice of the parameters, the slices all-gathered (beside the course's all-reduce + "
            "broadcast, Sharding on)")},
        {QStringLiteral("torch-ddp"),
         tr("PyTorch's DistributedDataParallel (its bucket size the one below), with "
            "ZeroRedundancyOptimizer when sharded, in Python: the reference for the four above "
            "and your classes; on your checkout's model when it has one")}};
    // The four all-reduce strategies and ours fully sharded; PyTorch's (Python) on demand.
    QList<Choice> strategies;
    QStringList ours;
    for (const QString& n : strategyNames()) {
        strategies.push_back({n, n, strategyTips.value(n)});
        if (!strategyTraits(n.toStdString()).python) ours << n;
    }
    strategyRow_ =
        addChecks(dform, QStringLiteral("strategies"), tr("S&trategies:"), strategies, ours, 4);
    buckets_ =
        addText(dform, QStringLiteral("buckets"), tr("B&ucket sizes (MiB):"), QStringLiteral("25"),
                tr("Bucket sizes for the bucketed strategy, one point each: a bare number is MiB "
                   "(as PyTorch's bucket_cap_mb), e.g. 1, 10, 100, 1000, 25; or with its unit: "
                   "25MiB, 25MB"));
    sharding_ =
        addCombo(dform, QStringLiteral("sharding"), tr("S&harding:"),
                 {{tr("off"), QStringLiteral("off"), {}},
                  {tr("on (ZeRO-1)"), QStringLiteral("on"), {}},
                  {tr("both"), QStringLiteral("both"), {}}},
                 QStringLiteral("off"), tr("Shard AdamW's state over the ranks (ZeRO stage 1)"));
    paramDtype_ = addCombo(dform, QStringLiteral("param_dtype"), tr("FSDP p&arameters:"),
                           {{tr("fp32"), QStringLiteral("fp32"), {}},
                            {tr("bf16 (fp32 masters)"), QStringLiteral("bf16"), {}}},
                           QStringLiteral("fp32"),
                           tr("fsdp, fsdp2: the dtype weights are gathered and computed in and "
                              "gradients reduced in; bf16 halves the bytes moved (needs bf16 "
                              "precision)"));
    prefetch_ = addSpin(dform, QStringLiteral("prefetch"), tr("FSDP pre&fetch:"), 0, 64, 2,
                        tr("fsdp: forward gathers a block's weights once the block this many "
                           "before it has run (2: the course's; 0: when it is about to run)"));
    QList<Choice> checkpoints;
    for (const char* c : {"none", "1", "2", "4", "sqrt", "nested"})
        checkpoints.push_back({QString::fromLatin1(c), QString::fromLatin1(c), {}});
    checkpoint_ = addCombo(dform, QStringLiteral("checkpoint"), tr("Check&pointing:"), checkpoints,
                           QStringLiteral("none"),
                           tr("Activation checkpointing: keep only every k blocks' inputs and "
                              "recompute the rest in backward (sqrt: k = ⌈√N⌉; nested: halves, "
                              "recursively)"));
    field(QStringLiteral("checkpoint")).load = [this,
                                                load = field(QStringLiteral("checkpoint")).load](
                                                   const QJsonObject& o, QStringList* notes) {
        const QString c = o.value(QLatin1String("checkpoint")).toString();
        if (checkpoint_->findData(c) < 0 && parseCheckpointing(c.toStdString()))
            checkpoint_->addItem(c, c);  // every k blocks with a k not in the list
        load(o, notes);
    };
    attention_ = addCombo(dform, QStringLiteral("attention"), tr("Atte&ntion:"),
                          choicesOf(allAttentionImpls()), QStringLiteral("naive"),
                          tr("The attention implementation (flash: TrainScope's "
                             "FlashAttention-2 kernels; sdpa: PyTorch's)"));
    vocab_ = addSpin(dform, QStringLiteral("vocab"), tr("&Vocabulary:"), 2, 1 << 24, 10000,
                     tr("The vocabulary: the course's 10,000; its leaderboard's 151,936"));
    fusedLoss_ = addCheck(dform, QStringLiteral("fused_loss"),
                          tr("fused LM head and loss (TrainScope's strategies)"), false,
                          tr("The LM head and cross-entropy in chunks of the sequence: the "
                             "[batch, seq, vocab] logits are never whole"));
    fusedKernels_ = addCheck(dform, QStringLiteral("fused_kernels"),
                             tr("fused element-wise kernels (TrainScope's strategies)"), false,
                             tr("RMSNorm, residual + norm, RoPE and SwiGLU as this project's "
                                "fused kernels: the compiled mode's model, without CUDA graphs"));
    keepAttention_ = addCheck(dform, QStringLiteral("keep_attention"),
                              tr("keep attention through checkpoints"), false,
                              tr("With the fused kernels, flash attention and checkpointing: "
                                 "the recompute reuses attention's output (one attention "
                                 "forward a block and step instead of two)"));
    compile_ =
        addCheck(dform, QStringLiteral("compile"), tr("torch.compile the fsdp2 reference"), false,
                 tr("fsdp2: each block and the LM head with the loss compiled, as a "
                    "tuned PyTorch reference would be"));
    // See Note [compiled data-parallel step] (engine/src/nn/graphed_step.cpp).
    exec_ = addCombo(dform, QStringLiteral("exec"), tr("E&xecution:"),
                     {{tr("eager"), QStringLiteral("eager"), {}},
                      {tr("compiled (CUDA graphs)"), QStringLiteral("compiled"), {}},
                      {tr("both"), QStringLiteral("both"), {}}},
                     QStringLiteral("eager"),
                     tr("TrainScope's naive, flat, overlap, bucketed and zero1: the whole step, "
                        "NCCL's collectives included, captured as CUDA graphs and replayed "
                        "(nccl only)"));
    warmup_ = addSpin(dform, QStringLiteral("warmup"), tr("Warm-up ste&ps:"), 0, 1000, 2);
    steps_ = addSpin(dform, QStringLiteral("steps"), tr("M&easured steps:"), 1, 100000, 5);
    outer->addWidget(ddpBox_);
    code_ = addCode(outer, /*both=*/false, CodeChoice::Purpose::DataParallel);
    outer->addStretch();
    addStatusLabels(outer);
    installRunShortcut();
    updateAvailability();
    revalidate();
}

int DistributedPanel::gpuCount() const {
    int gpus = 0;
    for (const auto& d : caps_.devices)
        if (d.id != "cpu") ++gpus;
    return gpus;
}

QString DistributedPanel::experiment() const { return experiment_->currentData().toString(); }

QString DistributedPanel::workerPath() const {
    if (!workerPath_.isEmpty()) return workerPath_;
    const QString env = qEnvironmentVariable("TRAINSCOPE_WORKER");
    if (!env.isEmpty()) return env;
    return QCoreApplication::applicationDirPath() + QStringLiteral("/trainscope-cli");
}

void DistributedPanel::updateAvailability() {
    const bool was = updating_;
    updating_ = true;
    // NCCL: a CUDA build with c10d's NCCL, and a GPU for every rank.
    const int gpus = gpuCount();
    QString why;
    if (!dist::ncclBuilt())
        why = tr("This TrainScope was built without NCCL (a CPU LibTorch): use gloo");
    else if (capsKnown_ && gpus == 0)
        why = tr("NCCL needs a CUDA device for every rank; this machine has none");
    const int nccl = backend_->findData(QStringLiteral("nccl"));
    if (auto* model = qobject_cast<QStandardItemModel*>(backend_->model()))
        model->item(nccl)->setEnabled(why.isEmpty());
    backend_->setItemData(nccl,
                          why.isEmpty() ? tr("NCCL on %n GPU(s): one rank per GPU", "", gpus) : why,
                          Qt::ToolTipRole);
    if (!why.isEmpty() && backend_->currentIndex() == nccl)
        backend_->setCurrentIndex(backend_->findData(QStringLiteral("gloo")));
    const bool onGpus = backend_->currentData().toString() == QLatin1String("nccl");
    world_->setMaximum(onGpus && capsKnown_ ? std::max(1, gpus) : kMaxCpuRanks);
    world_->setToolTip(onGpus ? tr("Ranks: one per GPU, at most %1 here").arg(world_->maximum())
                              : tr("Ranks: CPU processes, at most %1").arg(kMaxCpuRanks));

    const QString e = experiment();
    allreduceBox_->setVisible(e == QLatin1String("allreduce"));
    ddpBox_->setVisible(e != QLatin1String("allreduce"));
    if (code_) code_->setVisible(e != QLatin1String("allreduce"));
    if (e == QLatin1String("ddp-sharding"))
        sharding_->setCurrentIndex(sharding_->findData(QStringLiteral("both")));
    sharding_->setEnabled(e == QLatin1String("ddp"));
    buckets_->setEnabled(
        checkBox(QStringLiteral("strategies"), QStringLiteral("bucketed"))->isChecked() ||
        checkBox(QStringLiteral("strategies"), QStringLiteral("torch-ddp"))->isChecked() ||
        (code_ && code_->yours()));
    const bool fsdp = checkBox(QStringLiteral("strategies"), QStringLiteral("fsdp"))->isChecked();
    paramDtype_->setEnabled(
        fsdp || checkBox(QStringLiteral("strategies"), QStringLiteral("fsdp2"))->isChecked());
    prefetch_->setEnabled(fsdp);
    compile_->setEnabled(
        checkBox(QStringLiteral("strategies"), QStringLiteral("fsdp2"))->isChecked());
    updating_ = was;
}

void DistributedPanel::revalidate() {
    QHash<QWidget*, QStringList> byField;
    QStringList general;
    const QString e = experiment();
    const bool allreduce = e == QLatin1String("allreduce");

    DistributedPoint base;
    base.backend = dist::parseBackend(backend_->currentData().toString().toStdString())
                       .value_or(dist::CommBackend::Gloo);
    base.world_size = world_->value();
    const bool onGpus = base.backend == dist::CommBackend::Nccl;
    DistributedSpec spec;
    if (allreduce) {
        base.experiment = DistExperiment::Allreduce;
        base.allreduce.sizes.clear();
        const QStringList sizes = listItems(sizes_->text());
        if (sizes.isEmpty())
            byField[sizes_] << tr("give at least one all-reduce size (e.g. 1MB, 16MB, 64MB)");
        for (const QString& t : sizes) {
            QString compact = t;
            compact.remove(QLatin1Char(' '));
            const auto bytes = dist::parseByteSize(compact.toStdString());
            if (!bytes)
                byField[sizes_]
                    << tr("all-reduce size '%1' is not a size (1MB, 16MiB, 1GB)").arg(t);
            else if (*bytes <= 0)
                byField[sizes_] << tr("all-reduce size '%1' must be positive").arg(t);
            else
                base.allreduce.sizes.push_back(*bytes);
        }
        base.allreduce.dtypes.clear();
        for (const QString& d : ticked(QStringLiteral("dtypes")))
            if (auto dt = dist::parseDtype(d.toStdString())) base.allreduce.dtypes.push_back(*dt);
        if (base.allreduce.dtypes.empty()) byField[dtypeRow_] << tr("choose at least one dtype");
        base.allreduce.warmup = arWarmup_->value();
        base.allreduce.iters = arIters_->value();
        if (arSweepWorld_->isChecked()) {
            // 2, 4, 6, … and the world size itself.
            for (int n = 2; n < base.world_size; n += 2) {
                DistributedPoint p = base;
                p.world_size = n;
                spec.points.push_back(p);
            }
        }
        spec.points.push_back(base);
    } else {
        base.experiment = DistExperiment::Ddp;
        DdpSpec& d = base.ddp;
        d.model_size = model_->currentData().toString().toStdString();
        d.context_length = context_->value();
        d.batch_per_rank = batch_->value();
        d.warmup_steps = warmup_->value();
        d.measured_steps = steps_->value();
        d.param_dtype = paramDtype_->currentData().toString().toStdString();
        d.prefetch = prefetch_->value();
        d.vocab_size = vocab_->value();
        d.attention = parseAttentionImpl(attention_->currentData().toString().toStdString())
                          .value_or(AttentionImpl::Naive);
        d.fused_loss = fusedLoss_->isChecked();
        d.fused_kernels = fusedKernels_->isChecked();
        d.keep_attention = keepAttention_->isChecked();
        d.compile = compile_->isChecked();
        d.checkpoint = parseCheckpointing(checkpoint_->currentData().toString().toStdString())
                           .value_or(Checkpointing{});
        // d.device stays "cpu", as the CLI stores it: each worker sets its own (cuda:LOCAL_RANK).
        std::vector<Precision> precisions;
        for (const QString& p : ticked(QStringLiteral("precisions")))
            if (auto pr = parsePrecision(p.toStdString())) precisions.push_back(*pr);
        if (precisions.empty()) byField[precisionRow_] << tr("choose at least one precision");
        std::vector<std::string> strategies;
        for (const QString& s : ticked(QStringLiteral("strategies")))
            strategies.push_back(s.toStdString());
        if (code_->yours()) {
            // See Note [your DDP classes]: the strategies the user's adapters define.
            d.code = code_->code().code;
            d.python = code_->code().python;
            if (const QString m = code_->problem(); !m.isEmpty())
                byField[code_->codeEdit()] << m;
            else if (d.code.empty())
                byField[code_->codeEdit()] << tr("Your DDP classes: no code given");
            else
                try {
                    for (auto& y : userDdpStrategies(d.code)) strategies.push_back(y);
                } catch (const std::exception& ex) {
                    byField[code_->codeEdit()] << QString::fromUtf8(ex.what());
                }
        }
        if (strategies.empty()) byField[strategyRow_] << tr("choose at least one strategy");
        std::vector<double> buckets;
        bool bucketed = false;
        for (const auto& s : strategies) bucketed = bucketed || strategyTraits(s).bucket_size;
        for (const QString& t : listItems(buckets_->text())) {
            const std::optional<double> parsed = parseBucketMiB(t.toStdString());
            const double mb = parsed.value_or(0);
            if (!parsed)
                byField[buckets_]
                    << tr("bucket size '%1' is not a size (25 or 25MiB: MiB; 25MB: 10^6 bytes)")
                           .arg(t);
            else if (mb <= 0)
                byField[buckets_]
                    << tr("bucket size must be a positive number of MiB (got %1)").arg(t);
            else if (mb > kMaxBucketMiB)
                byField[buckets_]
                    << tr("bucket size %1 is more than %2 MiB").arg(t).arg(kMaxBucketMiB);
            else if (std::find(buckets.begin(), buckets.end(), mb) == buckets.end())
                buckets.push_back(mb);
        }
        if (!bucketed)
            byField.remove(buckets_);
        else if (buckets.empty() && !byField.contains(buckets_))
            byField[buckets_] << tr("give at least one bucket size in MiB (e.g. 25)");
        if (buckets.empty())
            buckets = {d.bucket_mb};
        else
            d.bucket_mb = buckets.front();
        const QString sharding = sharding_->currentData().toString();
        std::vector<bool> shardings;
        if (e == QLatin1String("ddp-sharding") || sharding == QLatin1String("both"))
            shardings = {false, true};
        else
            shardings = {sharding == QLatin1String("on")};
        const QString exec = exec_->currentData().toString();
        const std::vector<ExecMode> execs =
            exec == QLatin1String("both")       ? std::vector{ExecMode::Eager, ExecMode::Compiled}
            : exec == QLatin1String("compiled") ? std::vector{ExecMode::Compiled}
                                                : std::vector{ExecMode::Eager};
        spec.points = ddpSweep(base, precisions, strategies, buckets, shardings, execs);
    }
    spec_ = spec;

    // The engine's checks of every point (the same message once), then this machine's.
    const int gpus = capsKnown_ ? gpuCount() : 1 << 20;
    QStringList messages;
    for (const auto& p : spec_.points)
        for (const auto& m : validateDistributedPoint(p, gpus, dist::ncclBuilt()))
            if (!messages.contains(qstr(m))) messages << qstr(m);
    if (!allreduce && capsKnown_ && messages.isEmpty()) {
        RunNeeds needs;
        needs.device = onGpus ? "cuda" : "cpu";
        for (const auto& p : spec_.points)
            if (std::find(needs.precisions.begin(), needs.precisions.end(), p.ddp.precision) ==
                needs.precisions.end())
                needs.precisions.push_back(p.ddp.precision);
        for (const auto& m : checkRunnable(needs)) messages << qstr(m);
    }
    for (const QString& m : messages) {
        const QString l = m.toLower();
        QWidget* target = nullptr;
        if (l.contains(QLatin1String("world size")))
            target = world_;
        else if (l.contains(QLatin1String("nccl")))
            target = backend_;
        else if (l.contains(QLatin1String("parameters need")) ||
                 l.contains(QLatin1String("parameter dtype")))
            target = paramDtype_;
        else if (l.contains(QLatin1String("prefetch")))
            target = prefetch_;
        else if (l.contains(QLatin1String("bucket")))
            target = buckets_;
        else if (l.contains(QLatin1String("strateg")))
            target = strategyRow_;
        else if (l.contains(QLatin1String("dtype")))
            target = dtypeRow_;
        else if (l.contains(QLatin1String("bf16")) || l.contains(QLatin1String("fp16")) ||
                 l.contains(QLatin1String("precision")))
            target = allreduce ? dtypeRow_ : precisionRow_;
        else if (l.contains(QLatin1String("model size")) || l.contains(QLatin1String("vocab")))
            target = model_;
        else if (l.contains(QLatin1String("context")))
            target = context_;
        else if (l.contains(QLatin1String("batch")))
            target = batch_;
        else if (l.contains(QLatin1String("iteration")))
            target = arIters_;
        else if (l.contains(QLatin1String("warm-up")) || l.contains(QLatin1String("warmup")))
            target = allreduce ? arWarmup_ : warmup_;
        else if (l.contains(QLatin1String("measured steps")))
            target = steps_;
        else if (l.contains(QLatin1String("size")) && allreduce)
            target = sizes_;
        if (target)
            byField[target] << m;
        else
            general << m;
    }
    // Fields of the experiment not shown do not block Run.
    for (QWidget* w : allreduce ? QList<QWidget*>{model_, context_, batch_, precisionRow_,
                                                  strategyRow_, buckets_, warmup_, steps_}
                                : QList<QWidget*>{sizes_, dtypeRow_, arWarmup_, arIters_})
        byField.remove(w);
    showProblems(byField, general);
    Q_EMIT changed();
}

QString DistributedPanel::runSummary() const {
    if (spec_.points.empty()) return tr("Nothing to run");
    int least = spec_.points.front().world_size, most = least;
    for (const auto& p : spec_.points) {
        least = std::min(least, p.world_size);
        most = std::max(most, p.world_size);
    }
    QString s = tr("%n point(s) of %1 rank(s) each", "", static_cast<int>(spec_.points.size()))
                    .arg(least == most ? QString::number(most)
                                       : QStringLiteral("%1–%2").arg(least).arg(most));
    s += QStringLiteral(": ") + qstr(pointHeadline(spec_.points.front()));
    if (spec_.points.size() > 1) s += QStringLiteral(", …");
    return s;
}

std::optional<LabJob> DistributedPanel::makeJob() const {
    if (!problems_.isEmpty() || !capsKnown_ || spec_.points.empty()) return std::nullopt;
    LabJob job = newJob(kDistributedLab,
                        spec_.points.front().backend == dist::CommBackend::Nccl ? "cuda:0" : "cpu",
                        static_cast<int>(spec_.points.size()));
    job.spec_json = distributedSpecText(spec_);
    job.run = [spec = spec_, worker = workerPath().toStdString()](
                  JobObserver& obs, const CancelToken& cancel, ResultStore* store, int64_t runId) {
        DistributedForwarder forward(obs);
        runDistributed(spec, worker, forward, cancel, store, runId);
    };
    return job;
}

namespace {
std::optional<DistributedSpec> specOf(const QJsonObject& json) {
    try {
        return distributedSpecFromText(
            QJsonDocument(json).toJson(QJsonDocument::Compact).toStdString());
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

template <typename F>
QStringList distinct(const std::vector<DistributedPoint>& points, F f) {
    QStringList out;
    for (const auto& p : points) {
        const QString v = f(p);
        if (!v.isEmpty() && !out.contains(v)) out << v;
    }
    return out;
}
}  // namespace

QString DistributedPanel::describeSpec(const QJsonObject& json) {
    const auto spec = specOf(json);
    if (!spec || spec->points.empty())
        return QObject::tr("(a distributed run whose configuration cannot be read)");
    const DistributedPoint& p = spec->points.front();
    const QString dot = QStringLiteral(", ");
    QStringList parts;
    QStringList worlds;
    for (const auto& q : spec->points)
        if (!worlds.contains(QString::number(q.world_size)))
            worlds << QString::number(q.world_size);
    parts << QObject::tr("%1 × %2").arg(qstr(std::string(dist::backendName(p.backend))),
                                        worlds.join(QStringLiteral(", ")));
    if (p.experiment == DistExperiment::Allreduce) {
        QStringList sizes, dtypes;
        for (int64_t b : p.allreduce.sizes) sizes << qstr(dist::formatByteSize(b));
        for (auto d : p.allreduce.dtypes) dtypes << QString::fromLatin1(dist::dtypeName(d));
        parts << QObject::tr("all-reduce") << sizes.join(dot) << dtypes.join(dot)
              << QObject::tr("%1 iterations").arg(p.allreduce.iters);
    } else {
        const auto& pts = spec->points;
        parts << QObject::tr("DDP") << qstr(p.ddp.model_size)
              << QStringLiteral("ctx %1").arg(p.ddp.context_length)
              << QObject::tr("b %1/rank").arg(p.ddp.batch_per_rank)
              << distinct(pts,
                          [](const DistributedPoint& q) { return qstr(toString(q.ddp.precision)); })
                     .join(dot)
              << distinct(pts, [](const DistributedPoint& q) {
                     return qstr(q.ddp.strategy);
                 }).join(dot);
        const QStringList buckets = distinct(pts, [](const DistributedPoint& q) {
            return q.ddp.strategy == "bucketed" ? numberText(q.ddp.bucket_mb) : QString();
        });
        if (!buckets.isEmpty()) parts << QObject::tr("buckets %1 MiB").arg(buckets.join(dot));
        const QStringList shard = distinct(pts, [](const DistributedPoint& q) {
            return q.ddp.shard_optimizer ? QObject::tr("sharded") : QObject::tr("unsharded");
        });
        if (p.ddp.checkpoint.kind != Checkpointing::Kind::None)
            parts << QObject::tr("checkpoint %1").arg(qstr(toString(p.ddp.checkpoint)));
        const bool fsdp = std::any_of(pts.begin(), pts.end(), [](const DistributedPoint& q) {
            return q.ddp.strategy == "fsdp" || q.ddp.strategy == "fsdp2";
        });
        if (fsdp && p.ddp.param_dtype != "fp32")
            parts << QObject::tr("%1 params").arg(qstr(p.ddp.param_dtype));
        parts << shard.join(QStringLiteral(" + "))
              << QObject::tr("%1+%2 steps").arg(p.ddp.warmup_steps).arg(p.ddp.measured_steps);
        if (pts.size() > 1) parts << QObject::tr("%1 points").arg(pts.size());
    }
    return parts.join(QStringLiteral(" · "));
}

QJsonObject DistributedPanel::stateFromSpec(const QJsonObject& json) {
    const auto spec = specOf(json);
    if (!spec || spec->points.empty()) return {};
    const DistributedPoint& p = spec->points.front();
    QJsonObject o;
    o[QStringLiteral("backend")] = QString::fromLatin1(dist::backendName(p.backend));
    o[QStringLiteral("world")] = p.world_size;
    if (p.experiment == DistExperiment::Allreduce) {
        QStringList sizes, dtypes;
        for (int64_t b : p.allreduce.sizes) sizes << qstr(dist::formatByteSize(b));
        for (auto d : p.allreduce.dtypes) dtypes << QString::fromLatin1(dist::dtypeName(d));
        o[QStringLiteral("experiment")] = QStringLiteral("allreduce");
        o[QStringLiteral("sizes")] = sizes.join(QStringLiteral(", "));
        o[QStringLiteral("dtypes")] = QJsonArray::fromStringList(dtypes);
        o[QStringLiteral("ar_warmup")] = p.allreduce.warmup;
        o[QStringLiteral("ar_iters")] = p.allreduce.iters;
        o[QStringLiteral("ar_sweep_world")] = spec->points.size() > 1;
        o[QStringLiteral("world")] = spec->points.back().world_size;
        return o;
    }
    const auto& pts = spec->points;
    bool sharded = false, unsharded = false;
    for (const auto& q : pts) (q.ddp.shard_optimizer ? sharded : unsharded) = true;
    o[QStringLiteral("experiment")] =
        sharded && unsharded ? QStringLiteral("ddp-sharding") : QStringLiteral("ddp");
    o[QStringLiteral("sharding")] = sharded && unsharded ? QStringLiteral("both")
                                    : sharded            ? QStringLiteral("on")
                                                         : QStringLiteral("off");
    o[QStringLiteral("model")] = qstr(p.ddp.model_size);
    o[QStringLiteral("context")] = static_cast<qint64>(p.ddp.context_length);
    o[QStringLiteral("batch")] = static_cast<qint64>(p.ddp.batch_per_rank);
    o[QStringLiteral("warmup")] = p.ddp.warmup_steps;
    o[QStringLiteral("steps")] = p.ddp.measured_steps;
    o[QStringLiteral("precisions")] = QJsonArray::fromStringList(
        distinct(pts, [](const DistributedPoint& q) { return qstr(toString(q.ddp.precision)); }));
    // The user's strategies come back through the Code box (their adapters decide them).
    o[QStringLiteral("strategies")] =
        QJsonArray::fromStringList(distinct(pts, [](const DistributedPoint& q) {
            return strategyTraits(q.ddp.strategy).users ? QString() : qstr(q.ddp.strategy);
        }));
    QString code, python;
    for (const auto& q : pts)
        if (strategyTraits(q.ddp.strategy).users)
            code = qstr(q.ddp.code), python = qstr(q.ddp.python);
    o[QStringLiteral("sources")] = QJsonArray::fromStringList(
        code.isEmpty() ? QStringList{} : QStringList{QStringLiteral("python")});
    if (!code.isEmpty()) o[QStringLiteral("code")] = code;
    o[QStringLiteral("python")] = python;
    const QStringList buckets = distinct(pts, [](const DistributedPoint& q) {
        return strategyTraits(q.ddp.strategy).bucket_size ? numberText(q.ddp.bucket_mb) : QString();
    });
    o[QStringLiteral("buckets")] =
        buckets.isEmpty() ? numberText(p.ddp.bucket_mb) : buckets.join(QStringLiteral(", "));
    o[QStringLiteral("param_dtype")] = qstr(p.ddp.param_dtype);
    o[QStringLiteral("prefetch")] = p.ddp.prefetch;
    o[QStringLiteral("checkpoint")] = qstr(toString(p.ddp.checkpoint));
    o[QStringLiteral("vocab")] = static_cast<qint64>(p.ddp.vocab_size);
    o[QStringLiteral("attention")] = qstr(std::string(toString(p.ddp.attention)));
    bool fused = false, compiled = false, kernels = false, keep = false;
    for (const auto& q : pts) {
        fused = fused || q.ddp.fused_loss;
        kernels = kernels || q.ddp.fused_kernels;
        keep = keep || q.ddp.keep_attention;
        compiled = compiled || q.ddp.compile;
    }
    o[QStringLiteral("fused_loss")] = fused;
    o[QStringLiteral("fused_kernels")] = kernels;
    o[QStringLiteral("keep_attention")] = keep;
    o[QStringLiteral("compile")] = compiled;
    bool eager_exec = false, compiled_exec = false;
    for (const auto& q : pts)
        (q.ddp.exec == ExecMode::Compiled ? compiled_exec : eager_exec) = true;
    o[QStringLiteral("exec")] = eager_exec && compiled_exec ? QStringLiteral("both")
                                : compiled_exec             ? QStringLiteral("compiled")
                                                            : QStringLiteral("eager");
    return o;
}

}  // namespace ts::ui
