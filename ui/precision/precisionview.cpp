#include "ui/precision/precisionview.h"

#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSplitter>
#include <QTableView>
#include <QTreeView>
#include <QVBoxLayout>
#include <cmath>
#include <functional>

#include "precision/precision_report.h"
#include "ui/common/format.h"
#include "ui/common/panes.h"
#include "ui/common/tableview.h"
#include "ui/precision/precisionchart.h"
#include "ui/precision/precisionmodels.h"
#include "ui/precision/precisionpanel.h"

namespace ts::ui {

namespace {

int colourOf(Precision p) {
    switch (p) {
        case Precision::FP32:
            return 0;
        case Precision::BF16:
            return 1;
        case Precision::FP16:
            return 2;
    }
    return 3;
}

QString studyOfCommand(const QString& command) {
    if (command == QLatin1String("precision accumulate")) return QStringLiteral("accumulate");
    if (command == QLatin1String("precision autocast")) return QStringLiteral("autocast");
    if (command == QLatin1String("precision train")) return QStringLiteral("train");
    return {};
}

QString studyTitle(const QString& study) {
    if (study == QLatin1String("accumulate")) return QObject::tr("the accumulation experiment");
    if (study == QLatin1String("autocast")) return QObject::tr("the autocast inspector");
    if (study == QLatin1String("train")) return QObject::tr("the training numerics experiment");
    return {};
}

QLabel* makeNote(QWidget* parent) {
    auto* l = new QLabel(parent);
    l->setWordWrap(true);
    l->setAlignment(Qt::AlignCenter);
    l->setContentsMargins(8, 8, 8, 8);
    return l;
}

// Two charts side by side.
QWidget* sideBySide(QWidget* parent, QWidget* a, QWidget* b) {
    auto* charts = new QSplitter(Qt::Horizontal, parent);
    charts->addWidget(a);
    charts->addWidget(b);
    return charts;
}

}  // namespace

PrecisionView::PrecisionView(QWidget* parent) : LabView(parent) {
    registerPrecisionMetaTypes();
    accumulation_ = new AccumulationModel(this);
    castTable_ = new AutocastTableModel(this);
    tree_ = new AutocastTreeModel(this);
    train_ = new TrainSummaryModel(this);

    // Accumulation: the running error, then the table.
    accChart_ = new PrecisionChart(QStringLiteral("accumulation"), this);
    accChart_->setObjectName(QStringLiteral("accumulationChart"));
    accChart_->setLogY(true);
    accChart_->setMinimumHeight(240);
    auto* accTable = new DataTableView(this);
    accTable->setObjectName(QStringLiteral("accumulationTable"));
    accTable->setTitle(tr("Accumulation"), QStringLiteral("accumulation"));
    accTable->setModel(accumulation_);
    accNote_ = makeNote(this);
    addPane({QStringLiteral("accumulation"), tr("A&ccumulation"),
             panePage(this, accNote_, accChart_, accTable, nullptr, {3, 1}), accChart_, accTable});

    // Autocast: the tree, a legend, and the records flat (what exports take).
    treeView_ = new QTreeView(this);
    treeView_->setObjectName(QStringLiteral("autocastTree"));
    treeView_->setModel(tree_);
    treeView_->setAlternatingRowColors(false);  // the dtype tints carry the meaning
    treeView_->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    auto* castFlat = new DataTableView(this);
    castFlat->setObjectName(QStringLiteral("autocastTable"));
    castFlat->setTitle(tr("Autocast dtypes"), QStringLiteral("autocast"));
    castFlat->setModel(castTable_);
    castNote_ = makeNote(this);
    castSummary_ = new QLabel(this);
    castSummary_->setWordWrap(true);
    castSummary_->setTextFormat(Qt::RichText);
    {
        auto swatch = [](const QString& d) {
            const QColor c = dtypeTint(d);
            return QStringLiteral(
                       "<span style=\"background-color: rgba(%1,%2,%3,%4)\">&nbsp;%5&nbsp;</span>")
                .arg(c.red())
                .arg(c.green())
                .arg(c.blue())
                .arg(c.alphaF(), 0, 'f', 2)
                .arg(d);
        };
        auto* legend = new QLabel(
            tr("Dtypes: %1 %2 %3 &nbsp; ◆ fp32 island: an op autocast keeps in fp32 although "
               "its input is lower precision")
                .arg(swatch(QStringLiteral("fp32")), swatch(QStringLiteral("bf16")),
                     swatch(QStringLiteral("fp16"))),
            this);
        legend->setTextFormat(Qt::RichText);
        legend->setWordWrap(true);
        addPane({QStringLiteral("autocast"), tr("A&utocast"),
                 panePage(this, paneColumn(this, {castNote_, castSummary_, legend}), treeView_,
                          castFlat, nullptr, {3, 1}),
                 nullptr, castFlat});
    }

    // Training: loss curves and their difference to fp32, side by side, then the summary.
    lossChart_ = new PrecisionChart(QStringLiteral("loss"), this);
    lossChart_->setObjectName(QStringLiteral("lossChart"));
    diffChart_ = new PrecisionChart(QStringLiteral("loss-difference"), this);
    diffChart_->setObjectName(QStringLiteral("lossDiffChart"));
    auto* trainTable = new DataTableView(this);
    trainTable->setObjectName(QStringLiteral("trainTable"));
    trainTable->setTitle(tr("Training numerics"), QStringLiteral("training"));
    trainTable->setModel(train_);
    trainNote_ = makeNote(this);
    for (PrecisionChart* c : {lossChart_, diffChart_}) c->setMinimumHeight(220);
    addPane({QStringLiteral("training"), tr("T&raining"),
             panePage(this, trainNote_, sideBySide(this, lossChart_, diffChart_), trainTable,
                      nullptr, {3, 1}),
             lossChart_, trainTable});

    // Loss scale: the scaler's scale per step with skipped steps marked, and fp16 underflow.
    scaleChart_ = new PrecisionChart(QStringLiteral("loss-scale"), this);
    scaleChart_->setObjectName(QStringLiteral("lossScaleChart"));
    scaleChart_->setLogY(true);
    underflowChart_ = new PrecisionChart(QStringLiteral("fp16-underflow"), this);
    underflowChart_->setObjectName(QStringLiteral("underflowChart"));
    auto* scaleTable = new DataTableView(this);
    scaleTable->setTitle(tr("Training numerics"), QStringLiteral("loss-scale"));
    scaleTable->setModel(train_);
    scaleNote_ = makeNote(this);
    for (PrecisionChart* c : {scaleChart_, underflowChart_}) c->setMinimumHeight(220);
    addPane({QStringLiteral("loss-scale"), tr("Loss &scale"),
             panePage(this, scaleNote_, sideBySide(this, scaleChart_, underflowChart_), scaleTable,
                      nullptr, {3, 1}),
             scaleChart_, scaleTable});
    begin({}, {});
}

void PrecisionView::begin(const QString& label, const std::string& spec_json) {
    accumulation_->clear();
    castTable_->clear();
    tree_->clear();
    train_->clear();
    label_ = label;
    storeRunId_ = 0;
    env_ = {};
    configuration_.clear();
    configurationJson_.clear();
    study_.clear();
    const QJsonDocument doc = QJsonDocument::fromJson(QByteArray::fromStdString(spec_json));
    if (doc.isObject()) {
        const QJsonObject spec = doc.object();
        study_ = studyOfCommand(spec.value(QLatin1String("command")).toString());
        configuration_ = PrecisionPanel::describeSpec(spec);
        configurationJson_ = QString::fromUtf8(doc.toJson(QJsonDocument::Indented)).trimmed();
    }
    refreshAccumulation();
    refreshAutocast();
    refreshTraining();
    refreshNotes();
    // A run shows a pane of its experiment: the one shown when it is one (a preset's choice
    // stays), else the experiment's first.
    const QString first = study_ == QLatin1String("autocast") ? QStringLiteral("autocast")
                          : study_ == QLatin1String("train")  ? QStringLiteral("training")
                                                              : QStringLiteral("accumulation");
    const int shown = currentPane();
    const QString shownKey = shown >= 0 && shown < panes().size() ? panes()[shown].key : QString();
    const bool relevant =
        study_ == QLatin1String("train")
            ? (shownKey == QLatin1String("training") || shownKey == QLatin1String("loss-scale"))
            : shownKey == first;
    if (!study_.isEmpty() && !relevant) showPane(paneIndex(first));
    Q_EMIT titleChanged();
}

void PrecisionView::beginRun(const LabJob& job) { begin(job.label, job.spec_json); }

void PrecisionView::runStarted(qint64 storeRunId, const Environment& env) {
    storeRunId_ = storeRunId;
    env_ = env;
    Q_EMIT titleChanged();
}

void PrecisionView::addResult(const QVariant& item) {
    if (item.metaType() == QMetaType::fromType<AccumulationResult>()) {
        accumulation_->add(item.value<AccumulationResult>());
        if (study_.isEmpty()) study_ = QStringLiteral("accumulate");
    } else if (item.metaType() == QMetaType::fromType<AutocastReport>()) {
        const auto report = item.value<AutocastReport>();
        castTable_->setReport(report);
        tree_->setReport(report);
        if (study_.isEmpty()) study_ = QStringLiteral("autocast");
    } else if (item.metaType() == QMetaType::fromType<TrainNumericsCurve>()) {
        train_->add(item.value<TrainNumericsCurve>());
        if (study_.isEmpty()) study_ = QStringLiteral("train");
    }
}

void PrecisionView::addItems(const QList<QVariant>& items) {
    for (const QVariant& item : items) addResult(item);
    refreshAccumulation();
    refreshAutocast();
    refreshTraining();
    refreshNotes();
}

bool PrecisionView::showStored(const StoredRun& run, QString* error) {
    std::vector<PrecisionRow> rows;
    try {
        rows = precisionRowsFromRows(run.info, run.rows);
    } catch (const std::exception& e) {
        if (error) *error = qstr(std::string(e.what()));
        return false;
    }
    begin(qstr(run.info.label), run.info.spec_json);
    storeRunId_ = run.info.id;
    showStoredEnvironment(run.info);
    QList<QVariant> items;
    for (const PrecisionRow& r : rows) {
        if (r.accumulation) items << QVariant::fromValue(*r.accumulation);
        if (r.autocast) items << QVariant::fromValue(*r.autocast);
        if (r.train) items << QVariant::fromValue(*r.train);
    }
    addItems(items);
    Q_EMIT logLine(tr("Opened %1 run %2 (%n result(s))", "", static_cast<int>(rows.size()))
                       .arg(qstr(run.info.lab))
                       .arg(run.info.id));
    Q_EMIT titleChanged();
    return true;
}

void PrecisionView::refreshAccumulation() {
    QList<PrecisionChart::Line> lines;
    int i = 0;
    for (const AccumulationResult& r : accumulation_->results()) {
        PrecisionChart::Line line;
        line.name = qstr(r.variant.name());
        line.colour = i++;
        line.points.reserve(static_cast<qsizetype>(r.running_error.size()));
        for (size_t k = 0; k < r.running_error.size(); ++k)
            line.points << QPointF(
                static_cast<double>((static_cast<int64_t>(k) + 1) * r.running_error_stride),
                std::abs(r.running_error[k]));
        lines << line;
    }
    QString title = tr("|running error| of each sum (exact zeros not drawn on the log axis)");
    if (!accumulation_->results().empty()) {
        const AccumulationResult& f = accumulation_->results().front();
        title = tr("|sum − step × %1| per step, %2 steps (exact zeros not drawn)")
                    .arg(f.addend, 0, 'g', 17)
                    .arg(f.count);
    }
    accChart_->setTitles(title, tr("step"), tr("|running error|"));
    if (auto* t =
            qobject_cast<QTableView*>(panes()[paneIndex(QStringLiteral("accumulation"))].table))
        t->resizeColumnsToContents();  // a row a sum: cheap
    accChart_->setLines(lines);
}

void PrecisionView::refreshAutocast() {
    const auto& report = castTable_->report();
    if (!report) {
        castSummary_->clear();
        castSummary_->hide();
        return;
    }
    QString text = tr("The %1 model under %2 autocast on %3: %n tensor(s) recorded.", "",
                      static_cast<int>(report->records.size()))
                       .arg(qstr(report->spec.model), qstr(toString(report->spec.dtype)),
                            qstr(report->spec.device));
    if (report->status != Status::Ok)
        text += QStringLiteral(" <b>%1</b>: %2")
                    .arg(qstr(toString(report->status)), qstr(report->error).toHtmlEscaped());
    if (!report->ops.empty())
        text +=
            tr(" %n op(s) measured: each module's row lists them, with the dtype each "
               "computed in.",
               "", static_cast<int>(report->ops.size()));
    // See Note [autocast on the CPU]: the CPU's policy, said where the report was taken there.
    if (const std::string policy = autocastPolicyNote(*report); !policy.empty())
        text += QStringLiteral("<br><b>%1</b>").arg(qstr(policy).toHtmlEscaped());
    castSummary_->setText(text);
    castSummary_->show();
    treeView_->expandAll();
    // The ops stay one level deep: an op's nested ops and the LM's module-path rows open on
    // demand.
    std::function<void(const QModelIndex&)> fold = [&](const QModelIndex& parent) {
        for (int r = 0; r < tree_->rowCount(parent); ++r) {
            const QModelIndex at = tree_->index(r, 0, parent);
            const bool op = at.data(AutocastTreeModel::OpRole).isValid();
            const bool path = at.data(AutocastTreeModel::PathRole).toBool();
            if ((op || path) && tree_->hasChildren(at))
                treeView_->collapse(at);
            else
                fold(at);
        }
    };
    fold({});
}

void PrecisionView::refreshTraining() {
    QList<PrecisionChart::Line> loss, diff, scale, underflow;
    const TrainNumericsCurve* ref = train_->fp32();
    bool anySkipped = false;
    for (const TrainNumericsCurve& c : train_->curves()) {
        const QString name = qstr(toString(c.precision));
        const int colour = colourOf(c.precision);
        PrecisionChart::Line l{name, {}, colour, false};
        for (const auto& s : c.steps) l.points << QPointF(s.step, s.loss);
        loss << l;
        if (ref && &c != ref) {
            PrecisionChart::Line d{tr("%1 − fp32").arg(name), {}, colour, false};
            const size_t n = std::min(ref->steps.size(), c.steps.size());
            for (size_t i = 0; i < n; ++i)
                d.points << QPointF(c.steps[i].step, c.steps[i].loss - ref->steps[i].loss);
            diff << d;
        }
        if (!c.steps.empty() && c.steps.front().loss_scale > 0) {
            PrecisionChart::Line s{tr("%1 loss scale").arg(name), {}, colour, false};
            PrecisionChart::Line skipped{tr("%1 skipped (overflow)").arg(name), {}, 3, true};
            for (const auto& st : c.steps) {
                s.points << QPointF(st.step, st.loss_scale);
                if (st.skipped) skipped.points << QPointF(st.step, st.loss_scale);
            }
            scale << s;
            if (!skipped.points.isEmpty()) {
                scale << skipped;
                anySkipped = true;
            }
        }
        PrecisionChart::Line u{tr("%1 gradients").arg(name), {}, colour, false};
        for (const auto& st : c.steps)
            u.points << QPointF(st.step, static_cast<double>(st.fp16_underflow));
        if (!u.points.isEmpty()) underflow << u;
    }
    lossChart_->setTitles(tr("Loss per step, each precision from the same weights and data"),
                          tr("step"), tr("loss"));
    lossChart_->setLines(loss);
    diffChart_->setTitles(ref || train_->rowCount() == 0
                              ? tr("Loss difference to fp32")
                              : tr("Loss difference to fp32 (the run has no fp32 curve)"),
                          tr("step"), tr("loss − fp32 loss"));
    diffChart_->setLines(diff);
    scaleChart_->setTitles(anySkipped
                               ? tr("Loss scale per step; ▲ skipped steps (inf/NaN gradients)")
                               : tr("Loss scale per step (no step skipped)"),
                           tr("step"), tr("loss scale"));
    scaleChart_->setLines(scale);
    double most = 0;
    for (const auto& l : underflow)
        for (const QPointF& p : l.points) most = std::max(most, p.y());
    underflowChart_->setTitles(
        underflow.isEmpty() || most > 0
            ? tr("Gradient elements lost to fp16 underflow without scaling")
            : tr("Gradient elements lost to fp16 underflow without scaling: none in this run"),
        tr("step"), tr("elements"));
    underflowChart_->setLines(underflow);
    for (const char* key : {"training", "loss-scale"})
        if (auto* t = qobject_cast<QTableView*>(panes()[paneIndex(QLatin1String(key))].table))
            t->resizeColumnsToContents();
}

QString PrecisionView::emptyNote(const QString& paneKey) const {
    QString needed;
    bool filled = false;
    if (paneKey == QLatin1String("accumulation")) {
        needed = QStringLiteral("accumulate");
        filled = accumulation_->rowCount() > 0;
    } else if (paneKey == QLatin1String("autocast")) {
        needed = QStringLiteral("autocast");
        filled = castTable_->report().has_value();
    } else if (paneKey == QLatin1String("training")) {
        needed = QStringLiteral("train");
        filled = train_->rowCount() > 0;
    } else if (paneKey == QLatin1String("loss-scale")) {
        needed = QStringLiteral("train");
        filled = false;
        for (const auto& c : train_->curves())
            filled |= !c.steps.empty() && c.steps.front().loss_scale > 0;
        if (!filled && train_->rowCount() > 0)
            return tr(
                "This training run has no fp16 curve: only fp16 uses a loss scaler. Tick fp16 to "
                "see the scale.");
    }
    if (filled) return {};
    if (study_.isEmpty() || study_ == needed)
        return tr("Run %1 (Precision lab) to fill this pane.").arg(studyTitle(needed));
    return tr("The shown run is %1; this pane is filled by %2.")
        .arg(studyTitle(study_), studyTitle(needed));
}

void PrecisionView::refreshNotes() {
    const QList<QPair<QString, QLabel*>> notes = {{QStringLiteral("accumulation"), accNote_},
                                                  {QStringLiteral("autocast"), castNote_},
                                                  {QStringLiteral("training"), trainNote_},
                                                  {QStringLiteral("loss-scale"), scaleNote_}};
    for (const auto& [key, label] : notes) {
        const QString note = emptyNote(key);
        label->setText(note);
        label->setVisible(!note.isEmpty());
    }
}

QList<ReportPart> PrecisionView::reportParts() const {
    QList<ReportPart> parts;
    if (accumulation_->rowCount() > 0) {
        parts << ReportPart{tr("Accumulation: running error"), accChart_, nullptr, {}};
        parts << ReportPart{tr("Accumulation"), nullptr, accumulation_, {}};
    }
    if (castTable_->report()) {
        parts << ReportPart{tr("Autocast dtypes"), nullptr, castTable_, {}};
        // The window's op tree: each module's ops and the dtype each computed in.
        parts << ReportPart{tr("Autocast, op by op"), nullptr, tree_, {}};
    }
    if (train_->rowCount() > 0) {
        parts << ReportPart{tr("Training: loss"), lossChart_, nullptr, {}};
        if (train_->fp32() && train_->rowCount() > 1)
            parts << ReportPart{tr("Training: loss difference to fp32"), diffChart_, nullptr, {}};
        if (emptyNote(QStringLiteral("loss-scale")).isEmpty()) {
            parts << ReportPart{tr("Loss scale"), scaleChart_, nullptr, {}};
            parts << ReportPart{tr("fp16 underflow"), underflowChart_, nullptr, {}};
        }
        parts << ReportPart{tr("Training numerics"), nullptr, train_, {}};
    }
    if (parts.isEmpty()) parts << ReportPart{tr("Accumulation"), nullptr, accumulation_, {}};
    return parts;
}

}  // namespace ts::ui
