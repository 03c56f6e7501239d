#include "ui/profiler/calltree.h"

#include <QContextMenuEvent>
#include <QMenu>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <algorithm>

#include "ui/common/format.h"
#include "ui/common/theme.h"

namespace ts::ui {

// ---- The tree table ----

CallTreeModel::CallTreeModel(QObject* parent) : QAbstractItemModel(parent) {}

void CallTreeModel::setTree(std::shared_ptr<const CallTree> tree, bool gpu) {
    beginResetModel();
    tree_ = std::move(tree);
    gpu_ = gpu;
    row_.clear();
    if (tree_) {
        row_.assign(tree_->nodes.size(), 0);
        for (const auto& n : tree_->nodes)
            for (size_t i = 0; i < n.children.size(); ++i)
                row_[static_cast<size_t>(n.children[i])] = static_cast<int>(i);
    }
    endResetModel();
}

QModelIndex CallTreeModel::indexOfNode(int node, int column) const {
    if (!tree_ || node < 0 || node >= static_cast<int>(tree_->nodes.size())) return {};
    return createIndex(row_[static_cast<size_t>(node)], column, static_cast<quintptr>(node));
}

int CallTreeModel::nodeOf(const QModelIndex& index) const {
    return index.isValid() ? static_cast<int>(index.internalId()) : -1;
}

QModelIndex CallTreeModel::index(int row, int column, const QModelIndex& parent) const {
    if (!tree_ || tree_->nodes.empty() || row < 0 || column < 0 || column >= columnCount())
        return {};
    if (!parent.isValid()) return row == 0 ? createIndex(0, column, quintptr{0}) : QModelIndex();
    if (parent.column() != 0) return {};
    const auto& kids = tree_->nodes[static_cast<size_t>(nodeOf(parent))].children;
    if (row >= static_cast<int>(kids.size())) return {};
    return createIndex(row, column, static_cast<quintptr>(kids[static_cast<size_t>(row)]));
}

QModelIndex CallTreeModel::parent(const QModelIndex& child) const {
    if (!child.isValid() || !tree_) return {};
    const int p = tree_->nodes[static_cast<size_t>(nodeOf(child))].parent;
    return p < 0 ? QModelIndex() : indexOfNode(p);
}

int CallTreeModel::rowCount(const QModelIndex& parent) const {
    if (!tree_ || tree_->nodes.empty()) return 0;
    if (!parent.isValid()) return 1;  // the root
    if (parent.column() != 0) return 0;
    return static_cast<int>(tree_->nodes[static_cast<size_t>(nodeOf(parent))].children.size());
}

int CallTreeModel::columnCount(const QModelIndex&) const { return gpu_ ? 6 : 5; }

QVariant CallTreeModel::data(const QModelIndex& index, int role) const {
    if (!index.isValid() || !tree_) return {};
    const int id = nodeOf(index);
    const CallTreeNode& n = tree_->nodes[static_cast<size_t>(id)];
    const double total = tree_->nodes[0].inclusive_us;
    const double share = total > 0 ? n.inclusive_us / total : 0;
    if (role == NodeRole) return id;
    if (role == Qt::TextAlignmentRole)
        return index.column() == Name ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                                      : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && index.column() == Name) return qstr(tree_->path(id));
    const bool op = n.kind == CallNodeKind::Op;
    if (role == ValueRole) {
        switch (index.column()) {
            case Name:
                return qstr(n.name);
            case Inclusive:
                return n.inclusive_us / 1e3;
            case Self:
                return n.self_us / 1e3;
            case Share:
                return share;
            case Calls:
                return op ? QVariant(static_cast<qlonglong>(n.calls)) : QVariant();
            case Device:
                return n.device_us / 1e3;
        }
    }
    if (role != Qt::DisplayRole) return {};
    switch (index.column()) {
        case Name:
            return qstr(n.name);
        case Inclusive:
            return formatMs(n.inclusive_us / 1e3);
        case Self:
            return formatMs(n.self_us / 1e3);
        case Share:
            return QStringLiteral("%1 %").arg(100.0 * share, 0, 'f', 1);
        case Calls:
            return op ? QString::number(n.calls) : QString();
        case Device:
            return formatMs(n.device_us / 1e3);
    }
    return {};
}

QVariant CallTreeModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Name:
            return tr("Phase, range or op");
        case Inclusive:
            return tr("Inclusive (ms)");
        case Self:
            return tr("Self (ms)");
        case Share:
            return tr("Share");
        case Calls:
            return tr("Calls");
        case Device:
            return tr("GPU kernels (ms)");
    }
    return {};
}

// ---- The flame graph ----

FlameGraph::FlameGraph(QWidget* parent) : QWidget(parent) {
    setMouseTracking(true);
    setMinimumHeight(120);
    style_ = currentChartStyle();
    connect(&Theme::instance(), &Theme::changed, this, [this] {
        style_ = currentChartStyle();
        update();
    });
}

QString FlameGraph::chartTitle() const {
    return measure_ == Measure::Cpu ? tr("Call tree: CPU time by phase, range and op")
                                    : tr("Call tree: GPU kernel time by phase, range and op");
}

void FlameGraph::setTree(std::shared_ptr<const CallTree> tree) {
    tree_ = std::move(tree);
    zoom_ = 0;
    hover_ = -1;
    updateGeometry();
    update();
    Q_EMIT zoomChanged(zoom_);
}

void FlameGraph::setMeasure(Measure m) {
    if (m == measure_) return;
    measure_ = m;
    update();
}

void FlameGraph::zoomTo(int node) {
    if (!tree_ || node < 0 || node >= static_cast<int>(tree_->nodes.size()) || node == zoom_)
        return;
    zoom_ = node;
    update();
    Q_EMIT zoomChanged(zoom_);
}

double FlameGraph::value(int node) const {
    const CallTreeNode& n = tree_->nodes[static_cast<size_t>(node)];
    return measure_ == Measure::Cpu ? n.inclusive_us : n.device_us;
}

int FlameGraph::rowHeight() const { return fontMetrics().height() + 6; }

QSize FlameGraph::sizeHint() const {
    int depth = 1;
    if (tree_)
        for (const auto& n : tree_->nodes) depth = std::max(depth, n.depth + 1);
    return {600, std::max(160, depth * rowHeight() + 8)};
}

std::vector<FlameGraph::Placed> FlameGraph::layout(const QRectF& area) const {
    std::vector<Placed> out;
    if (!tree_ || tree_->nodes.empty()) return out;
    const double h = rowHeight();
    // The zoomed node's ancestors, full width above it, root first.
    std::vector<int> above;
    for (int n = tree_->nodes[static_cast<size_t>(zoom_)].parent; n >= 0;
         n = tree_->nodes[static_cast<size_t>(n)].parent)
        above.push_back(n);
    std::reverse(above.begin(), above.end());
    double y = area.top();
    for (int n : above) {
        out.push_back({n, QRectF(area.left(), y, area.width(), h - 1), true});
        y += h;
    }
    if (value(zoom_) <= 0) {
        out.push_back({zoom_, QRectF(area.left(), y, area.width(), h - 1), false});
        return out;
    }
    // Depth first: each child's width its share of its parent's; narrower than half a pixel
    // is left out (with everything under it).
    struct Todo {
        int node;
        double x, w, y;
    };
    std::vector<Todo> todo = {{zoom_, area.left(), area.width(), y}};
    while (!todo.empty()) {
        const Todo t = todo.back();
        todo.pop_back();
        out.push_back({t.node, QRectF(t.x, t.y, t.w, h - 1), false});
        const double v = value(t.node);
        if (v <= 0) continue;
        double x = t.x;
        for (int c : tree_->nodes[static_cast<size_t>(t.node)].children) {
            const double w = t.w * value(c) / v;
            if (w >= 0.5) todo.push_back({c, x, w, t.y + h});
            x += w;
        }
    }
    return out;
}

QRectF FlameGraph::nodeRect(int node) const {
    for (const Placed& p : layout(rect()))
        if (p.node == node) return p.rect;
    return {};
}

int FlameGraph::nodeAt(const QPointF& pos) const {
    for (const Placed& p : layout(rect()))
        if (p.rect.contains(pos)) return p.node;
    return -1;
}

QString FlameGraph::describe(int node) const {
    if (!tree_ || node < 0 || node >= static_cast<int>(tree_->nodes.size())) return {};
    const CallTreeNode& n = tree_->nodes[static_cast<size_t>(node)];
    const double all = value(0), shown = value(zoom_), v = value(node);
    const bool cpu = measure_ == Measure::Cpu;
    double self = n.self_us;
    if (!cpu) {  // kernels it launched itself: its device time less its children's
        self = v;
        for (int c : n.children) self -= value(c);
        self = std::max(0.0, self);
    }
    QStringList lines;
    lines << qstr(n.name);
    lines << tr("%1: %2 ms inclusive, %3 ms self")
                 .arg(cpu ? tr("CPU") : tr("GPU kernels"), formatMs(v / 1e3), formatMs(self / 1e3));
    if (all > 0) {
        QString share = tr("%1 % of the profile").arg(100.0 * v / all, 0, 'f', 1);
        if (zoom_ != 0 && shown > 0)
            share += tr(", %1 % of %2")
                         .arg(100.0 * v / shown, 0, 'f', 1)
                         .arg(qstr(tree_->nodes[static_cast<size_t>(zoom_)].name));
        lines << share;
    }
    if (n.kind == CallNodeKind::Op) lines << tr("%n call(s)", nullptr, static_cast<int>(n.calls));
    if (node != 0) lines << qstr(tree_->path(node));
    return lines.join(QLatin1Char('\n'));
}

QColor FlameGraph::colourOf(int node) const {
    const CallTreeNode& n = tree_->nodes[static_cast<size_t>(node)];
    switch (n.kind) {
        case CallNodeKind::Root:
            return style_.muted;
        case CallNodeKind::Phase: {
            const auto p = parsePhase(n.name);
            const int i = p ? static_cast<int>(*p) : 3;
            return i < 3 ? style_.seriesColor(i).lighter(style_.dark ? 90 : 130) : style_.muted;
        }
        case CallNodeKind::Range:
            return style_.dark ? style_.grid.lighter(160) : style_.grid.darker(115);
        case CallNodeKind::Op:
            // Ops by category, as the GPU lanes of the timeline colour kernels.
            return style_.seriesColor(static_cast<int>(categorize(n.name)));
    }
    return style_.muted;
}

void FlameGraph::draw(QPainter& p, const QRectF& area, bool forExport) {
    style_ = currentChartStyle();  // an export may ask for print colours
    p.fillRect(area, style_.background);
    drawn_ = 0;
    if (!tree_ || tree_->nodes.empty()) {
        p.setPen(style_.foreground);
        p.drawText(area, Qt::AlignCenter | Qt::TextWordWrap,
                   tr("No call tree: profile a point, or open a stored profile."));
        return;
    }
    const QFontMetricsF fm(p.font());
    for (const Placed& pl : layout(area)) {
        QColor c = colourOf(pl.node);
        if (pl.above) c.setAlpha(110);
        if (!forExport && pl.node == hover_) c = c.lighter(125);
        p.fillRect(pl.rect, c);
        ++drawn_;
        if (pl.rect.width() > 30) {
            p.setPen(c.lightnessF() > 0.55 || pl.above ? style_.foreground : QColor(Qt::white));
            if (c.lightnessF() > 0.55 && !pl.above) p.setPen(QColor(Qt::black));
            const QRectF box = pl.rect.adjusted(3, 0, -3, 0);
            p.drawText(box, Qt::AlignVCenter | Qt::AlignLeft,
                       fm.elidedText(qstr(tree_->nodes[static_cast<size_t>(pl.node)].name),
                                     Qt::ElideRight, box.width()));
        }
    }
}

void FlameGraph::paintEvent(QPaintEvent*) {
    QPainter p(this);
    draw(p, rect(), false);
}

void FlameGraph::paintChart(QPainter& painter, const QRectF& target) {
    painter.save();
    painter.setClipRect(target);
    draw(painter, target, true);
    painter.restore();
}

void FlameGraph::mouseMoveEvent(QMouseEvent* e) {
    const int n = nodeAt(e->position());
    if (n != hover_) {
        hover_ = n;
        update();
    }
    if (n < 0)
        QToolTip::hideText();
    else
        QToolTip::showText(e->globalPosition().toPoint(), describe(n), this);
}

void FlameGraph::leaveEvent(QEvent*) {
    hover_ = -1;
    update();
}

void FlameGraph::mousePressEvent(QMouseEvent* e) {
    if (e->button() != Qt::LeftButton) return;
    const int n = nodeAt(e->position());
    if (n >= 0) zoomTo(n);
}

void FlameGraph::contextMenuEvent(QContextMenuEvent* e) {
    QMenu menu(this);
    menu.addAction(tr("Show Everything"), this, [this] { zoomTo(0); })->setEnabled(zoom_ != 0);
    if (tree_ && zoom_ > 0)
        menu.addAction(tr("Zoom Out One Level"), this,
                       [this] { zoomTo(tree_->nodes[static_cast<size_t>(zoom_)].parent); });
    menu.addSeparator();
    menu.addAction(tr("Export Chart…"), this, &FlameGraph::exportRequested);
    menu.addAction(tr("Copy Chart Image"), this, &FlameGraph::copyRequested);
    menu.exec(e->globalPos());
}

}  // namespace ts::ui
