#include "ui/profiler/profileview.h"

#include <QComboBox>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QScrollArea>
#include <QSplitter>
#include <QTreeView>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <nlohmann/json.hpp>

#include "core/atomic_file.h"
#include "core/json.h"
#include "profiler/profiler_json.h"
#include "profiler/profiler_report.h"
#include "ui/common/format.h"
#include "ui/common/metatypes.h"
#include "ui/common/panes.h"
#include "ui/common/tableview.h"
#include "ui/profiler/calltree.h"
#include "ui/profiler/profilecharts.h"
#include "ui/profiler/timelinechart.h"

namespace ts::ui {

namespace {
DataTableView* makeTable(QWidget* parent, QAbstractItemModel* model, const QString& name,
                         const QString& title, const QString& stem, bool sortable) {
    auto* t = new DataTableView(parent);
    t->setObjectName(name);
    t->setTitle(title, stem);
    t->setModel(model);
    // Sortable by any column, but first in the engine's order (by time, descending).
    t->horizontalHeader()->setSortIndicator(-1, Qt::DescendingOrder);
    t->setSortingEnabled(sortable);
    t->horizontalHeader()->setStretchLastSection(false);
    return t;
}

QWidget* page(QWidget* parent, QVBoxLayout** layout) {
    auto* w = new QWidget(parent);
    *layout = new QVBoxLayout(w);
    (*layout)->setContentsMargins(4, 4, 4, 4);
    return w;
}

// The trace file, whole or not at all.
bool writeTraceFile(const ProfileResult& r, const QString& path, QString* error) {
    // Never over a results store: any SQLite database or its log is refused.
    if (const std::string problem = outputTargetProblem(path.toStdString(), {}); !problem.empty()) {
        if (error) *error = QObject::tr("cannot write %1").arg(QString::fromStdString(problem));
        return false;
    }
    QSaveFile f(path);
    if (!f.open(QIODevice::WriteOnly)) {
        if (error) *error = QObject::tr("cannot write %1: %2").arg(path, f.errorString());
        return false;
    }
    const std::string json = chromeTraceJson(r);
    if (f.write(json.data(), static_cast<qint64>(json.size())) !=
            static_cast<qint64>(json.size()) ||
        !f.commit()) {
        if (error) *error = QObject::tr("cannot write %1: %2").arg(path, f.errorString());
        return false;
    }
    return true;
}
}  // namespace

ProfileView::ProfileView(QWidget* parent) : LabView(parent) {
    kernels_ = makeKernelTableModel(this);
    ops_ = makeOpTableModel(this);
    categories_ = makeCategoryTableModel(this);
    attention_ = makeAttentionPartModel(this);
    phases_ = makePhaseTimeModel(this);
    activity_ = makeStepActivityModel(this);
    kernelFilter_ = new NameFilterModel(this);
    kernelFilter_->setSourceModel(kernels_);
    opFilter_ = new NameFilterModel(this);
    opFilter_->setSourceModel(ops_);

    // Kernels.
    QVBoxLayout* l = nullptr;
    QWidget* kernelPage = page(this, &l);
    kernelBar_ = makeFilterBar(kernelPage, l, true);
    kernelNote_ = new QLabel(kernelPage);
    kernelNote_->setWordWrap(true);
    kernelNote_->setVisible(false);
    l->addWidget(kernelNote_);
    kernelTable_ = makeTable(kernelPage, kernelFilter_, QStringLiteral("kernelTable"),
                             tr("GPU kernels"), QStringLiteral("kernels"), true);
    l->addWidget(kernelTable_, 1);
    kernelTable_->setEmptyText(
        tr("No kernels to show: profile a point on a GPU (a CPU profile records no kernels), or "
           "loosen the filter above. Each CUDA kernel then comes with its time, calls, phase and "
           "the op that launched it."));
    addPane({QStringLiteral("kernels"), tr("&Kernels"), kernelPage, nullptr, kernelTable_});

    // Ops.
    QWidget* opPage = page(this, &l);
    opBar_ = makeFilterBar(opPage, l, false);
    opTable_ = makeTable(opPage, opFilter_, QStringLiteral("opTable"), tr("Ops"),
                         QStringLiteral("ops"), true);
    l->addWidget(opTable_, 1);
    opTable_->setEmptyText(
        tr("No ops to show: profile a point, or loosen the filter above. Each "
           "LibTorch op then comes with its CPU and device time, calls and "
           "phase."));
    addPane({QStringLiteral("ops"), tr("&Ops"), opPage, nullptr, opTable_});

    // Call tree.
    addPane({QStringLiteral("calltree"), tr("Ca&ll Tree"), makeCallTreePage(), flame_, nullptr});
    connect(flame_, &FlameGraph::exportRequested, this,
            [this] { Q_EMIT exportRequested(paneIndex(QStringLiteral("calltree"))); });
    connect(flame_, &FlameGraph::copyRequested, this,
            [this] { Q_EMIT copyRequested(paneIndex(QStringLiteral("calltree"))); });

    // Categories.
    categoryChart_ = new CategoryChart(this);
    categoryChart_->setObjectName(QStringLiteral("categoryChart"));
    categoryTable_ = makeTable(this, categories_, QStringLiteral("categoryTable"),
                               tr("Category roll-up"), QStringLiteral("categories"), false);
    addPane({QStringLiteral("categories"), tr("&Categories"),
             panePage(this, nullptr, categoryChart_, categoryTable_, nullptr, {3, 1}),
             categoryChart_, categoryTable_});

    // Attention.
    attentionChart_ = new AttentionPartsChart(this);
    attentionChart_->setObjectName(QStringLiteral("attentionPartsChart"));
    attentionTable_ =
        makeTable(this, attention_, QStringLiteral("attentionPartsTable"),
                  tr("Attention breakdown"), QStringLiteral("attention-parts"), false);
    addPane({QStringLiteral("attention-parts"), tr("A&ttention"),
             panePage(this, nullptr, attentionChart_, attentionTable_, nullptr, {3, 1}),
             attentionChart_, attentionTable_});

    // Timeline.
    timeline_ = new TimelineChart(this);
    timeline_->setObjectName(QStringLiteral("timeline"));
    auto* traceButton = new QPushButton(tr("Write &Perfetto Trace…"), this);
    traceButtons_ << traceButton;
    addPane({QStringLiteral("timeline"), tr("T&imeline"),
             panePage(this, nullptr, timeline_, nullptr, paneRow(this, {traceButton}, true)),
             timeline_, nullptr});
    connect(timeline_, &TimelineChart::exportRequested, this,
            [this] { Q_EMIT exportRequested(paneIndex(QStringLiteral("timeline"))); });
    connect(timeline_, &TimelineChart::copyRequested, this,
            [this] { Q_EMIT copyRequested(paneIndex(QStringLiteral("timeline"))); });

    // Phases.
    QWidget* phasePage = page(this, &l);
    phaseNote_ = new QLabel(phasePage);
    phaseNote_->setWordWrap(true);
    phaseNote_->setObjectName(QStringLiteral("phaseNote"));
    phaseTable_ = makeTable(phasePage, phases_, QStringLiteral("phaseTable"),
                            tr("Phases: profiled and measured"), QStringLiteral("phases"), false);
    activityTable_ =
        makeTable(phasePage, activity_, QStringLiteral("activityTable"),
                  tr("GPU activity per profiled step"), QStringLiteral("activity"), false);
    l->addWidget(phaseNote_);
    l->addWidget(phaseTable_, 1);
    activityLabel_ = new QLabel(tr("The GPU's activity in each profiled step (busy: some kernel "
                                   "running; idle gaps over %1 µs)")
                                    .arg(kIdleGapNs / 1000),
                                phasePage);
    l->addWidget(activityLabel_);
    l->addWidget(activityTable_, 1);
    addPane({QStringLiteral("phases"), tr("P&hases"), phasePage, nullptr, phaseTable_});

    // Compare: two stored runs' kernel tables (History's Compare).
    QWidget* comparePage = page(this, &l);
    diff_ = makeProfileDiffModel(this);
    diffText_ = new QLabel(comparePage);
    diffText_->setObjectName(QStringLiteral("profileCompareText"));
    diffText_->setWordWrap(true);
    diffText_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    diffTable_ = makeTable(comparePage, diff_, QStringLiteral("profileCompareTable"),
                           tr("Two profiles compared"), QStringLiteral("profile-comparison"), true);
    diffTable_->setEmptyText(
        tr("No comparison: select two profile runs in History and press Compare. Their kernels "
           "are then matched by name, with each run's time per profiled step, the difference "
           "and the ratio."));
    l->addWidget(diffText_);
    l->addWidget(diffTable_, 1);
    addPane({QStringLiteral("compare"), tr("Co&mpare"), comparePage, nullptr, diffTable_});

    for (QPushButton* b : traceButtons_) {
        b->setEnabled(false);
        b->setToolTip(
            tr("Writes the profile as a Chrome / Perfetto trace (open it in ui.perfetto.dev)"));
        connect(b, &QPushButton::clicked, this, &ProfileView::writeTraceInteractive);
    }
    for (DataTableView* t : {kernelTable_, opTable_, categoryTable_, attentionTable_, phaseTable_,
                             activityTable_, diffTable_}) {
        connect(t, &DataTableView::exportRequested, this, [this, t] {
            for (int i = 0; i < panes().size(); ++i)
                if (panes()[i].table == t) Q_EMIT exportRequested(i);
        });
    }
}

// The flame graph above the tree table; a click in either shows the node in the other.
QWidget* ProfileView::makeCallTreePage() {
    QVBoxLayout* l = nullptr;
    QWidget* w = page(this, &l);
    auto* row = new QHBoxLayout;
    flameMeasure_ = new QComboBox(w);
    flameMeasure_->setObjectName(QStringLiteral("flameMeasure"));
    flameMeasure_->addItem(tr("CPU time"), static_cast<int>(FlameGraph::Measure::Cpu));
    flameMeasure_->addItem(tr("GPU kernel time"), static_cast<int>(FlameGraph::Measure::Device));
    flameMeasure_->setToolTip(
        tr("What the bars' widths show: the ops' time on the CPU, or the time of the kernels "
           "they launched (a GPU profile)"));
    flameZoom_ = new QLabel(w);
    flameZoom_->setObjectName(QStringLiteral("flameZoom"));
    flameZoom_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    auto* reset = new QPushButton(tr("Show &Everything"), w);
    row->addWidget(new QLabel(tr("Width:"), w));
    row->addWidget(flameMeasure_);
    row->addWidget(flameZoom_, 1);
    row->addWidget(reset);
    l->addLayout(row);

    flame_ = new FlameGraph(w);
    flame_->setObjectName(QStringLiteral("flameGraph"));
    auto* scroll = new QScrollArea(w);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setWidget(flame_);
    callTree_ = new CallTreeModel(this);
    callTreeView_ = new QTreeView(w);
    callTreeView_->setObjectName(QStringLiteral("callTreeView"));
    callTreeView_->setModel(callTree_);
    callTreeView_->setUniformRowHeights(true);
    callTreeView_->setAlternatingRowColors(true);
    auto* split = new QSplitter(Qt::Vertical, w);
    split->addWidget(scroll);
    split->addWidget(callTreeView_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    l->addWidget(split, 1);

    connect(reset, &QPushButton::clicked, flame_, [this] { flame_->zoomTo(0); });
    connect(flameMeasure_, &QComboBox::currentIndexChanged, this, [this] {
        flame_->setMeasure(static_cast<FlameGraph::Measure>(flameMeasure_->currentData().toInt()));
    });
    connect(flame_, &FlameGraph::zoomChanged, this, [this](int node) {
        const CallTree* t = callTree_->tree();
        flameZoom_->setText(!t || node <= 0 ? tr("click a bar to zoom into it")
                                            : qstr(t->path(node)));
        const QModelIndex at = callTree_->indexOfNode(node);
        if (at.isValid() && callTreeView_->currentIndex() != at) {
            callTreeView_->scrollTo(at);
            callTreeView_->setCurrentIndex(at);
        }
    });
    connect(callTreeView_->selectionModel(), &QItemSelectionModel::currentChanged, this,
            [this](const QModelIndex& at) {
                if (at.isValid()) flame_->zoomTo(callTree_->nodeOf(at));
            });
    return w;
}

ProfileView::Filters ProfileView::makeFilterBar(QWidget* parent, QLayout* into, bool kernels) {
    Filters f{};
    auto* row = new QHBoxLayout;
    f.phase = new QComboBox(parent);
    f.phase->setObjectName(kernels ? QStringLiteral("kernelPhase") : QStringLiteral("opPhase"));
    f.phase->addItem(tr("all phases"), QString());
    for (Phase p : {Phase::Forward, Phase::Backward, Phase::Optimizer})
        f.phase->addItem(qstr(toString(p)), qstr(toString(p)));
    f.range = new QComboBox(parent);
    f.range->setObjectName(kernels ? QStringLiteral("kernelRange") : QStringLiteral("opRange"));
    f.range->addItem(tr("all ranges"), QString());
    f.range->setToolTip(tr(
        "Only what ran inside this range of the model (any layer's \"attention\", or one layer)"));
    f.search = new QLineEdit(parent);
    f.search->setObjectName(kernels ? QStringLiteral("kernelSearch") : QStringLiteral("opSearch"));
    f.search->setPlaceholderText(kernels ? tr("search kernel names") : tr("search op names"));
    f.search->setClearButtonEnabled(true);
    row->addWidget(new QLabel(tr("Phase:"), parent));
    row->addWidget(f.phase);
    row->addWidget(new QLabel(tr("Range:"), parent));
    row->addWidget(f.range);
    row->addWidget(f.search, 1);
    if (kernels) {
        auto* b = new QPushButton(tr("Write &Perfetto Trace…"), parent);
        traceButtons_ << b;
        row->addWidget(b);
    }
    static_cast<QVBoxLayout*>(into)->addLayout(row);
    connect(f.phase, &QComboBox::currentIndexChanged, this, [this, kernels] { refilter(kernels); });
    connect(f.range, &QComboBox::currentIndexChanged, this, [this, kernels] { refilter(kernels); });
    NameFilterModel* proxy = kernels ? kernelFilter_ : opFilter_;
    connect(f.search, &QLineEdit::textChanged, proxy, &NameFilterModel::setSearch);
    return f;
}

void ProfileView::refilter(bool kernels) {
    if (!analysis_.result) return;
    const Filters& f = kernels ? kernelBar_ : opBar_;
    EventFilter filter;
    if (const QString p = f.phase->currentData().toString(); !p.isEmpty())
        filter.phase = parsePhase(p.toStdString());
    filter.range = f.range->currentData().toString().toStdString();
    if (!filter.phase && filter.range.empty()) {  // the whole profile's, computed already
        ++filterRequests_[kernels ? 0 : 1];
        if (kernels)
            kernels_->setRows(analysis_.kernels);
        else
            ops_->setRows(analysis_.ops);
        Q_EMIT tablesFiltered();
        return;
    }
    // A hundred thousand kernels take a while to sum: a pool thread does it; a newer filter
    // or profile makes the answer stale.
    auto* w = new QFutureWatcher<FilteredTables>(this);
    const quint64 generation = generation_;
    const quint64 asked = ++filterRequests_[kernels ? 0 : 1];
    ++pending_;
    connect(w, &QFutureWatcherBase::finished, this, [this, w, generation, kernels, asked] {
        --pending_;
        w->deleteLater();
        if (generation != generation_ || asked != filterRequests_[kernels ? 0 : 1]) return;
        FilteredTables t = w->result();
        if (kernels)
            kernels_->setRows(std::move(t.kernels));
        else
            ops_->setRows(std::move(t.ops));
        Q_EMIT tablesFiltered();
    });
    w->setFuture(QtConcurrent::run([r = analysis_.result, filter, kernels] {
        FilteredTables t;
        if (kernels)
            t.kernels = kernelTable(r->trace.kernels, filter);
        else
            t.ops = opTable(r->trace.ops, filter, r->gpu);
        return t;
    }));
}

void ProfileView::begin(const QString& label, const std::string& specJson) {
    ++generation_;
    if (loadingStored_) {  // a stored profile still being read is not shown now
        loadingStored_ = false;
        Q_EMIT storedRunLoaded(tr("another run was shown before it was read"));
    }
    analysis_ = {};
    label_ = label;
    storeRunId_ = 0;
    env_ = {};
    stepsSeen_ = 0;
    kernels_->setRows({});
    ops_->setRows({});
    categories_->setRows({});
    attention_->setRows({});
    phases_->setRows({});
    activity_->setRows({});
    categoryChart_->setRows({}, false);
    attentionChart_->setParts({}, false);
    timeline_->setTimeline(nullptr, {});
    callTree_->setTree(nullptr, false);
    flame_->setTree(nullptr);
    // A comparison ends when another run is shown (compare() starts one after its run A).
    ++compareGeneration_;
    compareTitle_.clear();
    diff_->setRows({});
    diffText_->clear();
    for (QPushButton* b : traceButtons_) b->setEnabled(false);
    for (const Filters& f : {kernelBar_, opBar_}) {
        const QSignalBlocker a(f.phase), b(f.range);
        f.phase->setCurrentIndex(0);
        while (f.range->count() > 1) f.range->removeItem(1);
    }
    kernelNote_->setVisible(false);
    phaseNote_->clear();
    configuration_.clear();
    configurationJson_.clear();
    const auto spec = parseJsonOrDiscarded(specJson);
    if (spec.is_object()) {
        try {
            configuration_ = qstr(profileHeadline({profileSpecFromJson(spec)}));
        } catch (const std::exception&) {
            configuration_.clear();
        }
        configurationJson_ =
            qstr(spec.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    Q_EMIT titleChanged();
}

void ProfileView::beginRun(const LabJob& job) { begin(job.label, job.spec_json); }

void ProfileView::runStarted(qint64 storeRunId, const Environment& env) {
    storeRunId_ = storeRunId;
    env_ = env;
    Q_EMIT titleChanged();
}

void ProfileView::addItems(const QList<QVariant>& items) {
    for (const QVariant& item : items) {
        if (item.metaType() == QMetaType::fromType<StepSample>()) {
            const StepSample s = item.value<StepSample>();
            ++stepsSeen_;
            Q_EMIT statusText(
                tr("Step %1 %2: %3 ms")
                    .arg(s.index + 1)
                    .arg(s.warmup ? tr("(warm-up)") : tr("(profiled)"), formatMs(s.total_ms)));
        } else if (item.metaType() == QMetaType::fromType<ProfileAnalysis>()) {
            present(item.value<ProfileAnalysis>());
        }
    }
}

bool ProfileView::showStored(const StoredRun& run, QString* error) {
    if (run.rows.empty()) {
        if (error)
            *error = tr("run %1 holds no profile (it was stopped or failed before the profile was "
                        "stored)")
                         .arg(run.info.id);
        return false;
    }
    begin(qstr(run.info.label), run.info.spec_json);
    storeRunId_ = run.info.id;
    showStoredEnvironment(run.info);
    Q_EMIT statusText(tr("Reading the profile of run %1…").arg(run.info.id));
    // A large model's profile is tens of MB of JSON: parsed and analysed in a pool thread.
    struct Parsed {
        ProfileAnalysis analysis;
        QString error;
    };
    auto* w = new QFutureWatcher<Parsed>(this);
    const quint64 generation = generation_;
    const qint64 id = run.info.id;
    ++pending_;
    loadingStored_ = true;
    connect(w, &QFutureWatcherBase::finished, this, [this, w, generation, id] {
        --pending_;
        w->deleteLater();
        if (generation != generation_) return;  // begin() ended the wait for it
        loadingStored_ = false;
        Parsed p = w->result();
        if (!p.error.isEmpty()) {
            Q_EMIT logLine(tr("Could not read the profile of run %1: %2").arg(id).arg(p.error));
            Q_EMIT statusText(tr("Run %1's profile could not be read (see the log)").arg(id));
            Q_EMIT storedRunLoaded(p.error);
            return;
        }
        present(std::move(p.analysis));
        Q_EMIT logLine(tr("Opened profile run %1").arg(id));
        Q_EMIT storedRunLoaded({});
    });
    w->setFuture(QtConcurrent::run([json = run.rows.front().result_json] {
        Parsed p;
        try {
            p.analysis = analyzeProfile(profileResultFromJson(parseJson(json)));
        } catch (const std::exception& e) {
            p.error = qstr(std::string(e.what()));
        }
        return p;
    }));
    return true;
}

void ProfileView::present(ProfileAnalysis a) {
    analysis_ = std::move(a);
    const ProfileResult& r = *analysis_.result;
    // The profile's own environment first (it was taken where the profile ran); what the run
    // knew fills the rest.
    if (!r.environment.device_name.empty()) {
        const Environment known = env_;
        env_ = r.environment;
        takeEnvironment(known);
    }
    if (configuration_.isEmpty()) configuration_ = qstr(profileHeadline(r));
    kernels_->setRows(analysis_.kernels);
    ops_->setRows(analysis_.ops);
    categories_->setRows(analysis_.categories);
    attention_->setRows(analysis_.attention);
    phases_->setRows(analysis_.phases);
    activity_->setRows(analysis_.activity);
    categoryChart_->setRows(analysis_.categories, r.gpu);
    attentionChart_->setParts(analysis_.attention, r.gpu);
    timeline_->setTimeline(analysis_.timeline, analysis_.activity);
    callTree_->setTree(analysis_.calltree, r.gpu);
    flame_->setTree(analysis_.calltree);
    flameMeasure_->setCurrentIndex(0);
    flameMeasure_->setEnabled(r.gpu);
    // The root and its phases open; the columns fit the numbers, the names get the rest.
    callTreeView_->expandToDepth(1);
    for (int c = 1; c < callTree_->columnCount(); ++c) callTreeView_->resizeColumnToContents(c);
    callTreeView_->setColumnWidth(
        0, std::max(callTreeView_->columnWidth(0),
                    callTreeView_->fontMetrics().horizontalAdvance(QLatin1Char('x')) * 50));
    for (const Filters& f : {kernelBar_, opBar_}) {
        const QSignalBlocker a(f.phase), b(f.range);
        f.phase->setCurrentIndex(0);
        while (f.range->count() > 1) f.range->removeItem(1);
        for (const QString& name : analysis_.ranges) f.range->addItem(name, name);
    }
    for (QPushButton* b : traceButtons_) b->setEnabled(true);
    // The small tables fit their contents; the long ones (a row per kernel or op name) are
    // not measured, their names get room.
    for (DataTableView* t : {categoryTable_, attentionTable_, phaseTable_, activityTable_})
        t->resizeColumnsToContents();
    for (DataTableView* t : {kernelTable_, opTable_}) {
        t->fitColumnsToHeaders();
        t->setColumnWidth(0, std::max(t->columnWidth(0),
                                      t->fontMetrics().horizontalAdvance(QLatin1Char('x')) * 60));
    }
    kernelNote_->setVisible(!r.gpu);
    // The CPU has no GPU activity to show.
    activityLabel_->setVisible(r.gpu);
    activityTable_->setVisible(r.gpu);
    kernelNote_->setText(
        tr("This profile ran on the CPU, where there are no kernels: the Ops tab has the ops' CPU "
           "time."));
    // What the step achieved: the model's FLOPs over the measured time of the profiled steps.
    QStringList notes;
    if (r.status != Status::Ok)
        notes << tr("The profile ended %1%2")
                     .arg(qstr(toString(r.status)),
                          r.error.empty() ? QString() : QStringLiteral(": ") + qstr(r.error));
    double measuredMs = 0;
    int profiled = 0;
    for (const auto& s : r.steps)
        if (!s.warmup) measuredMs += s.total_ms, ++profiled;
    const StepFlops flops = r.spec.imported.empty() ? stepFlops(r.spec.bench) : StepFlops{};
    if (!r.spec.imported.empty())
        notes << tr("Imported from %1: the phases are the trace's own ranges, or what PyTorch "
                    "recorded (optimizer steps, autograd's backward ops); no model, no FLOPs.")
                     .arg(qstr(r.spec.imported));
    const double perStep = r.spec.bench.mode == Mode::Forward ? flops.forward : flops.total();
    if (profiled > 0 && perStep > 0 && measuredMs > 0) {
        const QString achieved =
            r.gpu ? qstr(achievedText(perStep * profiled, measuredMs / 1e3,
                                      r.environment.device_name, r.spec.bench.precision))
                  : tr("%1 GFLOP/s on the CPU")
                        .arg(perStep * profiled / (measuredMs / 1e3) / 1e9, 0, 'f', 1);
        notes << tr("Model FLOPs per step %1 GFLOP; achieved %2 over the %3 profiled step(s) (the "
                    "profiler's overhead included)")
                     .arg(QString::number(perStep / 1e9, 'g', 3), achieved)
                     .arg(profiled);
        if (r.gpu) {
            // The profiler slows the CPU's launches, so the GPU idles more than it would: over
            // the kernel time alone is what the GPU did while busy.
            double kernelUs = 0;
            for (const PhaseTime& p : phaseTimes(r))
                if (p.phase == Phase::Forward || p.phase == Phase::Backward)
                    kernelUs += p.profiled_us;
            if (kernelUs > 0)
                notes << tr("Over the forward and backward kernel time alone: %1")
                             .arg(qstr(achievedText(perStep * profiled, kernelUs / 1e6,
                                                    r.environment.device_name,
                                                    r.spec.bench.precision)));
        }
    }
    phaseNote_->setText(notes.join(QLatin1Char('\n')));
    Q_EMIT statusText(tr("Profile: %1 kernels, %2 ops, %3 ranges")
                          .arg(r.trace.kernels.size())
                          .arg(r.trace.ops.size())
                          .arg(r.trace.ranges.size()));
    Q_EMIT titleChanged();
    Q_EMIT profileShown();
}

bool ProfileView::compare(const StoredRun& a, const StoredRun& b, QString* error) {
    for (const StoredRun* r : {&a, &b})
        if (r->rows.empty()) {
            if (error)
                *error = tr("run %1 holds no profile to compare (it was stopped or failed before "
                            "one was stored)")
                             .arg(r->info.id);
            return false;
        }
    if (!showStored(a, error)) return false;  // run A in every other pane
    compareTitle_ = tr("run %1 vs run %2").arg(a.info.id).arg(b.info.id);
    diff_->setRows({});
    diffText_->setText(tr("Comparing %1…").arg(compareTitle_));
    showPane(paneIndex(QStringLiteral("compare")));
    // Two large profiles take a while to parse: a pool thread reads and compares them.
    struct Compared {
        ProfileResult a, b;
        ProfileDiff diff;
        QString error;
    };
    auto* w = new QFutureWatcher<Compared>(this);
    const quint64 generation = ++compareGeneration_;
    ++pending_;
    connect(w, &QFutureWatcherBase::finished, this, [this, w, generation] {
        --pending_;
        w->deleteLater();
        if (generation != compareGeneration_) return;
        Compared c = w->result();
        if (!c.error.isEmpty()) {
            diffText_->setText(tr("%1 could not be compared: %2").arg(compareTitle_, c.error));
            Q_EMIT logLine(diffText_->text());
            Q_EMIT comparisonShown(c.error);
            return;
        }
        const ProfileDiff& d = c.diff;
        QStringList lines;
        lines << tr("A: %1").arg(qstr(profileHeadline(c.a)))
              << tr("B: %1").arg(qstr(profileHeadline(c.b)));
        const QString what = d.kernels ? tr("Kernel time") : tr("Op self CPU time");
        QString total = tr("%1 per profiled step: A %2 ms, B %3 ms, B − A %4 ms")
                            .arg(what, formatMs(d.a_total_us / 1e3), formatMs(d.b_total_us / 1e3),
                                 formatMs((d.b_total_us - d.a_total_us) / 1e3));
        if (d.a_total_us > 0) total += tr(" (%1×)").arg(d.b_total_us / d.a_total_us, 0, 'f', 2);
        lines << total;
        if (!d.kernels)
            lines << tr(
                "Ops by self CPU time: a profile without kernels (the CPU's) is compared "
                "op by op.");
        diffText_->setText(lines.join(QLatin1Char('\n')));
        diff_->setRows(d.rows);
        diffTable_->fitColumnsToHeaders();
        diffTable_->setColumnWidth(
            0, std::max(diffTable_->columnWidth(0),
                        diffTable_->fontMetrics().horizontalAdvance(QLatin1Char('x')) * 60));
        Q_EMIT titleChanged();
        Q_EMIT comparisonShown({});
    });
    w->setFuture(
        QtConcurrent::run([ja = a.rows.front().result_json, jb = b.rows.front().result_json,
                           ida = a.info.id, idb = b.info.id] {
            Compared c;
            for (auto [json, out, id] : {std::tuple{&ja, &c.a, ida}, std::tuple{&jb, &c.b, idb}}) {
                try {
                    *out = profileResultFromJson(parseJson(*json));
                } catch (const std::exception& e) {
                    c.error = QObject::tr("run %1: %2").arg(id).arg(qstr(std::string(e.what())));
                    return c;
                }
            }
            c.diff = diffProfiles(c.a, c.b);
            return c;
        }));
    return true;
}

bool ProfileView::importFile(const QString& path, const QString& storePath, QString* error) {
    int rank = -1;  // of a distributed run's merged trace: rank 0 (the CLI's --rank: another)
    const std::optional<StoredRun> run = importRun(
        path, storePath, kProfileLab, tr("profile"),
        [&rank](std::string_view bytes, const std::string& name) {
            const auto r = importChromeTrace(bytes, name, -1, &rank);
            return ImportedRun{profileSpecJson(r.spec),
                               r.environment,
                               {0, r.status, dumpJson(toJson(r.spec)), dumpJson(toJson(r))}};
        },
        error);
    if (!run) return false;
    Q_EMIT logLine(tr("Imported %1 as run %2").arg(path).arg(run->info.id));
    if (rank >= 0)
        Q_EMIT logLine(tr("%1 is a distributed run's trace of every rank: rank %2 imported "
                          "(`trainscope-cli profile import FILE --rank R` imports another)")
                           .arg(path)
                           .arg(rank));
    return showStored(*run, error);
}

QString ProfileView::comparisonText() const { return diffText_->text(); }

ExportContext ProfileView::exportContext(int pane) const {
    ExportContext ctx = LabView::exportContext(pane);
    if (pane == paneIndex(QStringLiteral("compare")) && !compareTitle_.isEmpty())
        ctx.title = tr("Profile runs compared: %1").arg(compareTitle_);
    return ctx;
}

bool ProfileView::writeTrace(const QString& path, QString* error) const {
    if (!analysis_.result) {
        if (error) *error = tr("no profile is shown");
        return false;
    }
    return writeTraceFile(*analysis_.result, path, error);
}

void ProfileView::writeTraceInteractive() {
    if (!analysis_.result) return;
    const QString stem = storeRunId_ > 0 ? QStringLiteral("profile-run%1.json").arg(storeRunId_)
                                         : QStringLiteral("profile.json");
    const QString path = QFileDialog::getSaveFileName(this, tr("Write Perfetto Trace"), stem,
                                                      tr("Chrome / Perfetto trace (*.json)"));
    if (path.isEmpty()) return;
    // Serialising a large trace takes a moment: a pool thread does it.
    auto* w = new QFutureWatcher<QString>(this);
    connect(w, &QFutureWatcherBase::finished, this, [this, w, path] {
        const QString err = w->result();
        w->deleteLater();
        Q_EMIT logLine(err.isEmpty()
                           ? tr("Trace written to %1 (open it in ui.perfetto.dev)").arg(path)
                           : tr("Trace not written: %1").arg(err));
        Q_EMIT statusText(err.isEmpty() ? tr("Trace written")
                                        : tr("Trace not written (see the log)"));
    });
    w->setFuture(QtConcurrent::run([r = analysis_.result, path] {
        QString err;
        writeTraceFile(*r, path, &err);
        return err;
    }));
}

QList<ReportPart> ProfileView::reportParts() const {
    QList<ReportPart> parts;
    if (analysis_.result && analysis_.result->gpu)
        parts << ReportPart{tr("GPU kernels"), nullptr, kernelFilter_, {}};
    parts << ReportPart{tr("Ops"), nullptr, opFilter_, {}};
    if (analysis_.calltree && !analysis_.calltree->nodes.empty())
        parts << ReportPart{tr("Call tree"), flame_, nullptr, {}};
    parts << ReportPart{tr("Category roll-up"), categoryChart_, nullptr, {}};
    parts << ReportPart{tr("Category roll-up, table"), nullptr, categories_, {}};
    if (!attention_->rows().empty())
        parts << ReportPart{tr("Attention breakdown"), nullptr, attention_, {}};
    parts << ReportPart{tr("Phases: profiled and measured"), nullptr, phases_, {}};
    if (analysis_.result && analysis_.result->gpu && !activity_->rows().empty())
        parts << ReportPart{tr("GPU activity per profiled step"), nullptr, activity_, {}};
    parts << ReportPart{tr("Timeline"), timeline_, nullptr, {}};
    if (!diff_->rows().empty())
        parts << ReportPart{
            tr("Two profiles compared (%1)").arg(compareTitle_), nullptr, diff_, {}};
    return parts;
}

}  // namespace ts::ui
