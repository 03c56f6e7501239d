#include "ui/attention/attentionview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "attention/attention_report.h"
#include "core/json.h"
#include "ui/attention/attentionmodel.h"
#include "ui/common/format.h"
#include "ui/common/panes.h"
#include "ui/common/sweepchart.h"
#include "ui/common/tableview.h"

namespace ts::ui {

AttentionView::AttentionView(QWidget* parent) : LabView(parent) {
    model_ = new AttentionModel(this);
    series_ = new AttentionSeriesModel(model_, this);
    chart_ = new SweepChart(series_, this, QStringLiteral("attention"));
    chart_->setObjectName(QStringLiteral("attentionChart"));
    chart_->setLogY(true);
    chart_->setMinimumHeight(240);
    table_ = new DataTableView(this);
    table_->setObjectName(QStringLiteral("attentionTable"));
    table_->setTitle(tr("Attention cells"), QStringLiteral("attention"));
    table_->setModel(model_);
    pass_ = new QComboBox(this);
    for (AttentionPass p :
         {AttentionPass::Forward, AttentionPass::Backward, AttentionPass::ForwardBackward})
        pass_->addItem(qstr(toString(p)), static_cast<int>(p));
    connect(pass_, &QComboBox::currentIndexChanged, this,
            [this] { series_->setPass(static_cast<AttentionPass>(pass_->currentData().toInt())); });
    QWidget* controls = paneRow(this, {new QLabel(tr("Pass:"), this), pass_});
    addPane({QStringLiteral("attention"), tr("&Attention"),
             panePage(this, controls, chart_, table_), chart_, table_});
}

void AttentionView::begin(const QString& label, const std::string& spec_json) {
    model_->clear();
    label_ = label;
    storeRunId_ = 0;
    env_ = {};
    // The spec as the engine stored it (attentionSpecJson): one line, and the JSON itself.
    configuration_.clear();
    configurationJson_.clear();
    const auto spec = parseJsonOrDiscarded(spec_json);
    // The CPU records no device memory: its zeros are no measurement.
    const auto device = spec.is_object() ? spec.find("device") : spec.end();
    model_->setMeasuresMemory(device == spec.end() || !device->is_string() ||
                              device->get<std::string>().rfind("cuda", 0) == 0);
    if (spec.is_object()) {
        QStringList parts;
        auto list = [&](const char* key, const QString& name) {
            const auto it = spec.find(key);
            if (it == spec.end() || !it->is_array()) return;
            QStringList v;
            for (const auto& x : *it)
                v << (x.is_string() ? qstr(x.get<std::string>()) : qstr(x.dump()));
            parts << name.arg(v.join(QLatin1Char(',')));
        };
        list("impls", tr("impl %1"));
        list("dtypes", tr("%1"));
        list("seq_lens", tr("seq %1"));
        list("head_dims", tr("d %1"));
        list("batches", tr("batch %1"));
        list("heads", tr("heads %1"));
        list("causal", tr("causal %1"));
        configuration_ = parts.join(QStringLiteral("; "));
        configurationJson_ =
            qstr(spec.dump(2, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    Q_EMIT titleChanged();
}

void AttentionView::beginRun(const LabJob& job) { begin(job.label, job.spec_json); }

void AttentionView::runStarted(qint64 storeRunId, const Environment& env) {
    storeRunId_ = storeRunId;
    env_ = env;
    Q_EMIT titleChanged();
}

void AttentionView::addItems(const QList<QVariant>& items) {
    for (const QVariant& item : items)
        if (item.metaType() == QMetaType::fromType<AttentionCell>())
            model_->addCell(item.value<AttentionCell>());
}

bool AttentionView::showStored(const StoredRun& run, QString* error) {
    std::vector<AttentionCell> cells;
    try {
        cells = attentionCellsFromRows(run.info, run.rows);
    } catch (const std::exception& e) {
        if (error) *error = qstr(std::string(e.what()));
        return false;
    }
    begin(qstr(run.info.label), run.info.spec_json);
    storeRunId_ = run.info.id;
    showStoredEnvironment(run.info);
    for (const AttentionCell& c : cells) model_->addCell(c);
    Q_EMIT logLine(tr("Opened %1 run %2 (%3 cells)")
                       .arg(qstr(run.info.lab))
                       .arg(run.info.id)
                       .arg(cells.size()));
    Q_EMIT titleChanged();
    return true;
}

QList<ReportPart> AttentionView::reportParts() const {
    // One chart for each pass the run timed, then the table, which puts the pass shown back.
    QList<ReportPart> parts;
    for (int i = 0; i < pass_->count(); ++i) {
        const auto pass = static_cast<AttentionPass>(pass_->itemData(i).toInt());
        const bool timed = std::any_of(model_->cells().begin(), model_->cells().end(),
                                       [&](const AttentionCell& c) { return passMs(c, pass) > 0; });
        if (timed)
            parts << ReportPart{tr("Attention, %1").arg(pass_->itemText(i)), chart_, nullptr,
                                [this, i] { pass_->setCurrentIndex(i); }};
    }
    if (parts.isEmpty()) parts << ReportPart{tr("Attention"), chart_, nullptr, {}};
    parts << ReportPart{tr("Attention cells"), nullptr, model_,
                        [this, shown = pass_->currentIndex()] { pass_->setCurrentIndex(shown); }};
    return parts;
}

}  // namespace ts::ui
