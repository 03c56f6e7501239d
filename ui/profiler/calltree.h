// The profile's call tree (See Note [call tree] in engine/src/profiler/profiler.h) twice: as a
// tree table (CallTreeModel, for a QTreeView) and as a flame graph (FlameGraph: one bar per node,
// its width its share of the zoomed node's time, children below their parent). Hovering a bar
// names it with its inclusive and self time and shares; a click zooms into it (a click on a bar
// above the zoomed one zooms out to it); both views follow one another through node ids.
#pragma once

#include <QAbstractItemModel>
#include <QWidget>
#include <memory>
#include <vector>

#include "profiler/profiler.h"
#include "ui/common/chartstyle.h"
#include "ui/common/exporter.h"

namespace ts::ui {

class CallTreeModel : public QAbstractItemModel {
    Q_OBJECT
public:
    static constexpr int ValueRole = Qt::UserRole + 1;  // raw numbers (as the exporter reads)
    static constexpr int NodeRole = Qt::UserRole + 2;   // the node's id in the tree
    enum Column { Name, Inclusive, Self, Share, Calls, Device };

    explicit CallTreeModel(QObject* parent = nullptr);
    // A GPU profile adds the device-time column.
    void setTree(std::shared_ptr<const CallTree> tree, bool gpu);
    const CallTree* tree() const { return tree_.get(); }
    QModelIndex indexOfNode(int node, int column = 0) const;
    int nodeOf(const QModelIndex& index) const;  // -1 for an invalid index

    QModelIndex index(int row, int column, const QModelIndex& parent = {}) const override;
    QModelIndex parent(const QModelIndex& child) const override;
    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QVariant headerData(int section, Qt::Orientation o, int role) const override;

private:
    std::shared_ptr<const CallTree> tree_;
    std::vector<int> row_;  // each node's row under its parent
    bool gpu_ = false;
};

class FlameGraph : public QWidget, public ExportableChart {
    Q_OBJECT
public:
    enum class Measure { Cpu, Device };
    explicit FlameGraph(QWidget* parent = nullptr);

    QString chartTitle() const override;
    QString chartFileStem() const override { return QStringLiteral("flame-graph"); }
    void paintChart(QPainter& painter, const QRectF& target) override;
    QColor backgroundColor() const override { return style_.background; }

    void setTree(std::shared_ptr<const CallTree> tree);
    void setMeasure(Measure m);
    Measure measure() const { return measure_; }
    // The node shown full width (0: the root); zooming to a node that is not one does nothing.
    void zoomTo(int node);
    int zoomed() const { return zoom_; }
    // Where node `node` is drawn in the widget (empty when it is not: too narrow, or outside
    // the zoomed node's subtree and not above it), and the node under a point (-1: none).
    QRectF nodeRect(int node) const;
    int nodeAt(const QPointF& pos) const;
    // What hovering `node` shows: its name, inclusive and self time, share of all and of the
    // zoomed node, calls.
    QString describe(int node) const;
    int drawnNodes() const { return drawn_; }
    QSize sizeHint() const override;

Q_SIGNALS:
    void zoomChanged(int node);
    void exportRequested();
    void copyRequested();

protected:
    void paintEvent(QPaintEvent*) override;
    void mouseMoveEvent(QMouseEvent* e) override;
    void mousePressEvent(QMouseEvent* e) override;
    void contextMenuEvent(QContextMenuEvent* e) override;
    void leaveEvent(QEvent*) override;

private:
    struct Placed {
        int node;
        QRectF rect;
        bool above;  // an ancestor of the zoomed node, drawn full width and dimmed
    };
    std::vector<Placed> layout(const QRectF& area) const;
    double value(int node) const;
    int rowHeight() const;
    void draw(QPainter& p, const QRectF& area, bool forExport);
    QColor colourOf(int node) const;

    std::shared_ptr<const CallTree> tree_;
    Measure measure_ = Measure::Cpu;
    int zoom_ = 0;
    int hover_ = -1;
    int drawn_ = 0;
    ChartStyle style_;
};

}  // namespace ts::ui
