// The Profile view's Qt Charts: the category roll-up as one stacked bar per phase (shares of
// the phase's time, so the matmuls' share reads off directly), and the attention breakdown as
// bars of time per part, forward beside backward.
#pragma once

#include <QStringList>
#include <vector>

#include "profiler/profiler.h"
#include "ui/common/chartpane.h"

class QBarCategoryAxis;
class QBarSeries;
class QBarSet;
class QStackedBarSeries;
class QValueAxis;

class QGraphicsSimpleTextItem;

namespace ts::ui {

class CategoryChart : public ChartPane {
    Q_OBJECT
public:
    explicit CategoryChart(QWidget* parent = nullptr);
    QString chartTitle() const override { return tr("Where each phase's time goes"); }
    QString chartFileStem() const override { return QStringLiteral("categories"); }

    void setRows(const std::vector<CategoryRow>& rows, bool gpu);
    // What is drawn, for tests: the phases (bars), and each category's share (%) per phase.
    QStringList phases() const;
    QStringList categoryNames() const;
    QList<double> shares(Category c) const;
    // The shares written on the bars, bottom to top, phase by phase ("90.4 %"): only segments
    // tall enough for their text (See placeLabels).
    QStringList segmentLabels() const;

private:
    void redraw() override;
    void restyle() override;
    void placeLabels();

    std::vector<CategoryRow> rows_;
    bool gpu_ = false;
    QStackedBarSeries* series_;
    QList<QGraphicsSimpleTextItem*> labels_;
    QBarCategoryAxis* x_;
    QValueAxis* y_;
};

class AttentionPartsChart : public ChartPane {
    Q_OBJECT
public:
    explicit AttentionPartsChart(QWidget* parent = nullptr);
    QString chartTitle() const override { return tr("Attention: time per part"); }
    QString chartFileStem() const override { return QStringLiteral("attention-parts"); }

    void setParts(const std::vector<AttentionPart>& parts, bool gpu);
    QStringList partNames() const;

private:
    void redraw() override;
    void restyle() override;

    std::vector<AttentionPart> parts_;
    bool gpu_ = false;
    QBarSeries* series_;
    QBarCategoryAxis* x_;
    QValueAxis* y_;
};

}  // namespace ts::ui
