#include "attention/attentionview.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

#include "attention/attentionmodel.h"
#include "common/format.h"
#include "benchmark/sweepchart.h"
#include "common/tableview.h"

namespace ts::ui {

AttentionView::AttentionView(QWidget* parent) : ExperimentView(parent) {
    model_ = new AttentionModel(this);
    series_ = new AttentionSeriesModel(model_, this);
    chart_ = new SweepChart(series_, this, QStringLiteral("attention"));
    chart_->setObjectName(QStringLiteral("attentionChart"));
    chart_->setLogY(true);
    chart_->setMinimumHeight(320);
    table_ = new DataTableView(this);
    table_->setObjectName(QStringLiteral("attentionTable"));
    table_->setTitle(tr("Attention cells"), QStringLiteral("attention"));
    table_->setModel(model_);
    pass_ = new QComboBox(this);
    for (AttentionPass p : {AttentionPass::Forward, AttentionPass::Backward, AttentionPass::ForwardBackward})
        pass_->addItem(qstr(toString(p)), static_cast<int>(p));
    connect(pass_, &QComboBox::currentIndexChanged, this,
            [this] { series_->setPass(static_cast<AttentionPass>(pass_->currentData().toInt())); });
    auto* controls = new QHBoxLayout;
    controls->addWidget(new QLabel(tr("Pass:"), this));
    controls->addWidget(pass_);
    controls->addStretch();
    auto* split = new QSplitter(Qt::Vertical, this);
    split->addWidget(chart_);
    split->addWidget(table_);
    split->setStretchFactor(0, 3);
    split->setStretchFactor(1, 2);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    layout->addLayout(controls);
    layout->addWidget(split, 1);
}

void AttentionView::clear() { model_->clear(); }

void AttentionView::addItem(const QVariant& item) {
    if (item.metaType() == QMetaType::fromType<AttentionCell>()) model_->addCell(item.value<AttentionCell>());
}

ExportableChart* AttentionView::chart() { return chart_; }

}  // namespace ts::ui
