#include "ui/precision/precisionmodels.h"

#include <QBrush>
#include <QFont>
#include <QHash>
#include <algorithm>
#include <cmath>

#include "ui/common/format.h"
#include "ui/common/roles.h"

namespace ts::ui {

void registerPrecisionMetaTypes() {
    qRegisterMetaType<AccumulationResult>();
    qRegisterMetaType<AutocastReport>();
    qRegisterMetaType<TrainNumericsCurve>();
}

QColor dtypeTint(const QString& dtype) {
    // Hues far apart (blue, orange, magenta) and translucent: over a white base they read as
    // pastels, over a dark base as deep tints; the text keeps the palette's colour either way.
    if (dtype == QLatin1String("fp32")) return QColor(0x1e, 0x88, 0xe5, 70);
    if (dtype == QLatin1String("bf16")) return QColor(0xfb, 0x8c, 0x00, 90);
    if (dtype == QLatin1String("fp16")) return QColor(0xd8, 0x1b, 0x60, 80);
    return {};
}

namespace {
QString num(double v) { return QString::number(v, 'g', 17); }
QString stepText(int64_t step) {
    return step > 0 ? QObject::tr("step %1").arg(step) : QObject::tr("never");
}
}  // namespace

// ---------------------------------------------------------------- accumulation

AccumulationModel::AccumulationModel(QObject* parent) : QAbstractTableModel(parent) {
    registerPrecisionMetaTypes();
}

int AccumulationModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(results_.size());
}
int AccumulationModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AccumulationModel::headerData(int section, Qt::Orientation o, int role) const {
    // The CSV's names where the header does not say what the raw value is (see kCsvHeaderRole):
    // the steps, and LibTorch's own sum.
    if (o == Qt::Horizontal && role == kCsvHeaderRole) {
        if (section == FirstRounding) return QStringLiteral("first_rounding_step");
        if (section == FirstStall) return QStringLiteral("first_stall_step");
        if (section == Torch) return QStringLiteral("torch_value");
        return {};
    }
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Variant:
            return tr("Sum");
        case Value:
            return tr("Final value");
        case Exact:
            return tr("Exact value");
        case Error:
            return tr("Error");
        case AddendStored:
            return tr("Addend as stored");
        case FirstRounding:
            return tr("First rounding");
        case FirstStall:
            return tr("Stalls");
        case UlpEnd:
            return tr("Ulp at end");
        case Torch:
            return tr("LibTorch");
    }
    return {};
}

QVariant AccumulationModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const AccumulationResult& r = results_[static_cast<size_t>(index.row())];
    const int col = index.column();
    if (role == Qt::TextAlignmentRole)
        return col == Variant || col == FirstStall || col == Torch
                   ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                   : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole) {
        if (col == Value) return tr("%1 exactly").arg(num(r.value));
        if (col == FirstStall && r.first_stall_step > 0)
            return tr("From step %1 the sum stays at %2: half its ulp (%3) exceeds the addend")
                .arg(r.first_stall_step)
                .arg(num(r.sum_at_stall), num(r.ulp_at_stall / 2));
        return {};
    }
    if (role == Qt::BackgroundRole && col == Torch && r.torch_checked && r.torch_value != r.value)
        return QBrush(QColor(0xd3, 0x2f, 0x2f, 60));
    const bool raw = role == ValueRole;
    if (role != Qt::DisplayRole && !raw) return {};
    switch (col) {
        case Variant:
            return qstr(r.variant.name());
        case Value:
            return raw ? QVariant(r.value) : QVariant(QString::number(r.value, 'f', 4));
        case Exact:
            return raw ? QVariant(r.exact) : QVariant(num(r.exact));
        case Error:
            return raw ? QVariant(r.error) : QVariant(QString::asprintf("%+.4e", r.error));
        case AddendStored:
            return raw ? QVariant(r.addend_stored) : QVariant(num(r.addend_stored));
        // Never: no step, an empty CSV field (as the CLI's).
        case FirstRounding:
            if (raw)
                return r.first_rounding_step > 0
                           ? QVariant(static_cast<qlonglong>(r.first_rounding_step))
                           : QVariant();
            return stepText(r.first_rounding_step);
        case FirstStall:
            if (raw)
                return r.first_stall_step > 0 ? QVariant(static_cast<qlonglong>(r.first_stall_step))
                                              : QVariant();
            return r.first_stall_step > 0 ? tr("step %1 at %2 (ulp %3)")
                                                .arg(r.first_stall_step)
                                                .arg(num(r.sum_at_stall), num(r.ulp_at_stall))
                                          : tr("never");
        case UlpEnd:
            return raw ? QVariant(r.ulp_end) : QVariant(num(r.ulp_end));
        case Torch:
            if (!r.torch_checked) return raw ? QVariant() : QVariant(tr("not checked"));
            if (raw) return r.torch_value;
            return r.torch_value == r.value ? tr("same")
                                            : tr("differs: %1").arg(num(r.torch_value));
    }
    return {};
}

void AccumulationModel::clear() {
    beginResetModel();
    results_.clear();
    endResetModel();
}

void AccumulationModel::add(const AccumulationResult& r) {
    const int row = static_cast<int>(results_.size());
    beginInsertRows({}, row, row);
    results_.push_back(r);
    endInsertRows();
}

// ---------------------------------------------------------------- autocast, flat

AutocastTableModel::AutocastTableModel(QObject* parent) : QAbstractTableModel(parent) {
    registerPrecisionMetaTypes();
}

int AutocastTableModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !report_ ? 0 : static_cast<int>(report_->records.size());
}
int AutocastTableModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AutocastTableModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Name:
            return tr("Tensor");
        case Kind:
            return tr("Kind");
        case Params:
            return tr("Parameters");
        case Input:
            return tr("Input");
        case Output:
            return tr("Output");
    }
    return {};
}

QVariant AutocastTableModel::data(const QModelIndex& index, int role) const {
    if (!report_ ||
        !checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const AutocastRecord& r = report_->records[static_cast<size_t>(index.row())];
    auto dash = [](const std::string& s) { return s.empty() ? QStringLiteral("-") : qstr(s); };
    QString text;
    switch (index.column()) {
        case Name:
            text = qstr(r.name);
            break;
        case Kind:
            text = qstr(r.kind);
            break;
        case Params:
            text = dash(r.param_dtype);
            break;
        case Input:
            text = dash(r.input_dtype);
            break;
        case Output:
            text = dash(r.output_dtype);
            break;
    }
    if (role == Qt::DisplayRole) return text;
    if (role == Qt::BackgroundRole && index.column() >= Params) {
        const QColor c = dtypeTint(text);
        return c.isValid() ? QVariant(QBrush(c)) : QVariant();
    }
    return {};
}

void AutocastTableModel::setReport(const AutocastReport& report) {
    beginResetModel();
    report_ = report;
    endResetModel();
}

void AutocastTableModel::clear() {
    beginResetModel();
    report_.reset();
    endResetModel();
}

// ---------------------------------------------------------------- autocast, tree

AutocastTreeModel::AutocastTreeModel(QObject* parent) : QStandardItemModel(parent) { setHeaders(); }

void AutocastTreeModel::setHeaders() {
    setColumnCount(ColumnCount);
    setHorizontalHeaderLabels({tr("Module / op"), tr("Kind"), tr("Parameters"), tr("Input"),
                               tr("Output"), tr("Computed in"), tr("Gradient")});
    horizontalHeaderItem(Computed)->setToolTip(
        tr("The dtype each op's kernel computed in, measured: the dtypes of the "
           "inputs it was called with after autocast's casts. A module's row "
           "summarises its own ops"));
}

void AutocastTreeModel::clear() {
    QStandardItemModel::clear();
    setHeaders();
}

namespace {
bool isLow(const std::string& d) { return d == "bf16" || d == "fp16"; }

// A cell's tint: a list ("bf16, fp32") or a mixed call ("bf16+fp32") takes its first dtype's.
QColor cellTint(const QString& text) {
    return dtypeTint(
        text.section(QLatin1Char(','), 0, 0).section(QLatin1Char('+'), 0, 0).trimmed());
}

QList<QStandardItem*> rowItems(const QString& name, const QString& kind, const std::string& params,
                               const std::string& input, const std::string& output,
                               const std::string& computed, const std::string& grad,
                               const QString& recordName) {
    QList<QStandardItem*> row;
    auto* n = new QStandardItem(name);
    n->setData(recordName, Qt::UserRole + 1);
    row << n << new QStandardItem(kind);
    for (const std::string* d : {&params, &input, &output, &computed, &grad}) {
        auto* it = new QStandardItem(d->empty() ? QStringLiteral("-") : qstr(*d));
        const QColor tint = cellTint(it->text());
        if (tint.isValid()) it->setBackground(tint);
        row << it;
    }
    for (QStandardItem* it : row) it->setEditable(false);
    return row;
}
}  // namespace

void AutocastTreeModel::setReport(const AutocastReport& report) {
    clear();
    auto group = [this](const QString& title, const QString& tip) {
        QList<QStandardItem*> row;
        auto* head = new QStandardItem(title);
        QFont f = head->font();
        f.setBold(true);
        head->setFont(f);
        head->setToolTip(tip);
        row << head;
        for (int c = 1; c < ColumnCount; ++c) row << new QStandardItem;
        for (QStandardItem* it : row) it->setEditable(false);
        appendRow(row);
        return head;
    };
    const QString dtype = qstr(toString(report.spec.dtype));
    QStandardItem* forward =
        group(tr("forward (autocast %1, %2)").arg(dtype, qstr(report.spec.device)),
              tr("The model's modules and ops in the order they ran inside the autocast scope"));
    QStandardItem* loss = nullptr;
    QStandardItem* backward = nullptr;
    for (const AutocastRecord& r : report.records) {
        if (r.kind == "grad") continue;
        // The module's parameters' gradients: all of one dtype in practice; the first found.
        std::string grad;
        const std::string prefix = r.name + ".";
        for (const AutocastRecord& g : report.records)
            if (g.kind == "grad" && g.name.rfind(prefix, 0) == 0) {
                grad = g.output_dtype;
                break;
            }
        // The LM is recorded as one module: its gradients are all the run's gradients.
        if (grad.empty() && r.kind == "transformer_lm")
            for (const AutocastRecord& g : report.records)
                if (g.kind == "grad") {
                    if (grad.empty())
                        grad = g.output_dtype;
                    else if (grad != g.output_dtype)
                        grad = "mixed";
                }
        const bool island = r.output_dtype == "fp32" && isLow(r.input_dtype);
        QString kind = qstr(r.kind);
        if (island) kind += tr("  ◆ fp32 island");
        const std::string computed = report.computedIn(r);
        auto row = rowItems(qstr(r.name), kind, r.param_dtype, r.input_dtype, r.output_dtype,
                            computed, grad, qstr(r.name));
        if (!computed.empty())
            row[Computed]->setToolTip(
                tr("What %1's own ops computed in (their inputs after autocast's casts): %2")
                    .arg(qstr(r.name), qstr(computed)));
        row[Name]->setData(island, IslandRole);
        // What the dtypes say, in words (read from the record, not from a policy table).
        QString why;
        if (r.input_dtype.empty() || r.input_dtype == r.output_dtype)
            why = tr("%1 in, %1 out").arg(qstr(r.output_dtype));
        else if (isLow(r.output_dtype))
            why = tr("%1 in, %2 out: autocast ran it in %2")
                      .arg(qstr(r.input_dtype), qstr(r.output_dtype));
        else
            why = tr("%1 in, %2 out").arg(qstr(r.input_dtype), qstr(r.output_dtype));
        if (!r.param_dtype.empty() && r.param_dtype != r.output_dtype && isLow(r.output_dtype))
            why +=
                tr("; its %1 parameters stay %1 (cast for the op only)").arg(qstr(r.param_dtype));
        row[Output]->setToolTip(why);
        if (island) {
            QFont f = row[Kind]->font();
            f.setBold(true);
            row[Kind]->setFont(f);
            row[Kind]->setToolTip(
                tr("Autocast runs this op in fp32 although its input is %1: it is on the fp32 list "
                   "of the autocast policy")
                    .arg(qstr(r.input_dtype)));
        }
        appendOps(row[Name], report, r);
        if (r.kind == "cross_entropy" || r.name == "loss") {
            if (!loss) loss = group(tr("loss"), tr("The loss, computed inside the autocast scope"));
            loss->appendRow(row);
        } else {
            forward->appendRow(row);
        }
    }
    // Gradients, grouped by their dotted names: "blocks.0.attn.weight.grad" under blocks → 0 →
    // attn.
    for (const AutocastRecord& r : report.records) {
        if (r.kind != "grad") continue;
        if (!backward)
            backward =
                group(tr("backward (gradients)"), tr("Every parameter's gradient after backward"));
        QStringList parts = qstr(r.name).split(QLatin1Char('.'));
        // The leaf keeps "weight.grad"; the rest are the module path.
        const int leafParts = parts.size() >= 2 && parts.last() == QLatin1String("grad") ? 2 : 1;
        QStandardItem* parent = backward;
        for (int i = 0; i + leafParts < parts.size(); ++i) {
            QStandardItem* child = nullptr;
            for (int c = 0; c < parent->rowCount(); ++c)
                if (parent->child(c)->text() == parts[i] &&
                    parent->child(c)->data(Qt::UserRole + 1).toString().isEmpty())
                    child = parent->child(c);
            if (!child) {
                QList<QStandardItem*> row{new QStandardItem(parts[i])};
                for (int c = 1; c < ColumnCount; ++c) row << new QStandardItem;
                for (QStandardItem* it : row) it->setEditable(false);
                parent->appendRow(row);
                child = row.front();
            }
            parent = child;
        }
        parent->appendRow(rowItems(parts.mid(parts.size() - leafParts).join(QLatin1Char('.')),
                                   qstr(r.kind), r.param_dtype, r.input_dtype, {}, {},
                                   r.output_dtype, qstr(r.name)));
    }
}

void AutocastTreeModel::appendOps(QStandardItem* moduleItem, const AutocastReport& report,
                                  const AutocastRecord& record) {
    // Ops of a finer module than the record (the LM's "layer.0.attention") go under a row of
    // that module path; an op of depth d under the last op of depth d − 1 before it.
    QHash<QString, QStandardItem*> groups;
    QHash<QStandardItem*, QList<QStandardItem*>> lastAtDepth;  // per parent: depth → last op
    for (const AutocastOp* op : report.opsOf(record)) {
        QStandardItem* parent = moduleItem;
        if (op->module != record.name) {
            const QString path = op->module.empty() ? tr("(outside any module)") : qstr(op->module);
            QStandardItem*& g = groups[path];
            if (!g) {
                QList<QStandardItem*> row{new QStandardItem(path)};
                for (int c = 1; c < ColumnCount; ++c) row << new QStandardItem;
                row[Kind]->setText(tr("module"));
                row[Name]->setData(true, PathRole);
                for (QStandardItem* it : row) it->setEditable(false);
                moduleItem->appendRow(row);
                g = row.front();
            }
            parent = g;
        }
        QList<QStandardItem*>& last = lastAtDepth[parent];
        const int depth = std::min<int>(op->depth, static_cast<int>(last.size()));
        QStandardItem* under = depth > 0 ? last[depth - 1] : parent;
        std::string inputs;
        for (const auto& d : op->input_dtypes) inputs += (inputs.empty() ? "" : ", ") + d;
        QString kind = op->phase == "backward" ? tr("backward op") : tr("op");
        if (op->cast) kind += tr(", cast by autocast");
        if (!op->autograd_node.empty())
            kind += QStringLiteral(" (%1)").arg(qstr(op->autograd_node));
        auto row = rowItems(qstr(op->name), kind, {}, inputs, op->output_dtype, op->computed_dtype,
                            {}, QString());
        row[Name]->setData(static_cast<int>(op - report.ops.data()), OpRole);
        QString why;
        if (op->computed_dtype.empty())
            why = tr("No floating-point input");
        else if (op->cast)
            why = tr("Called with %1; autocast cast the inputs and called it again with %2: its "
                     "kernel computed in %2")
                      .arg(qstr(inputs), qstr(op->computed_dtype));
        else
            why = tr("Autocast left it alone: it computed in what it was given, %1")
                      .arg(qstr(op->computed_dtype));
        row[Computed]->setToolTip(why);
        under->appendRow(row);
        last.resize(depth);
        last.append(row[Name]);
    }
}

QModelIndex AutocastTreeModel::indexOfOp(int op, int column) const {
    const QModelIndexList hits =
        match(index(0, Name), OpRole, op, 1, Qt::MatchExactly | Qt::MatchRecursive);
    if (hits.isEmpty()) return {};
    return hits.front().siblingAtColumn(column);
}

QModelIndex AutocastTreeModel::indexOf(const QString& name, int column) const {
    const QModelIndexList hits =
        match(index(0, Name), Qt::UserRole + 1, name, 1, Qt::MatchExactly | Qt::MatchRecursive);
    if (hits.isEmpty()) return {};
    return hits.front().siblingAtColumn(column);
}

// ---------------------------------------------------------------- training

TrainSummaryModel::TrainSummaryModel(QObject* parent) : QAbstractTableModel(parent) {
    registerPrecisionMetaTypes();
}

int TrainSummaryModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : static_cast<int>(curves_.size());
}
int TrainSummaryModel::columnCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant TrainSummaryModel::headerData(int section, Qt::Orientation o, int role) const {
    if (o != Qt::Horizontal || role != Qt::DisplayRole) return {};
    switch (section) {
        case Precision_:
            return tr("Precision");
        case Status_:
            return tr("Status");
        case FirstLoss:
            return tr("First loss");
        case FinalLoss:
            return tr("Final loss");
        case MaxDiff:
            return tr("Max Δ loss vs fp32");
        case Skipped:
            return tr("Skipped steps");
        case ScaleFirst:
            return tr("First loss scale");
        case ScaleLast:
            return tr("Last loss scale");
        case Underflow:
            return tr("fp16 underflow (max/step)");
    }
    return {};
}

const TrainNumericsCurve* TrainSummaryModel::fp32() const {
    for (const auto& c : curves_)
        if (c.precision == Precision::FP32 && c.status == Status::Ok) return &c;
    return nullptr;
}

double TrainSummaryModel::maxDiffToFp32(const TrainNumericsCurve& c) const {
    const TrainNumericsCurve* ref = fp32();
    if (!ref || ref == &c || c.precision == Precision::FP32) return -1;
    const size_t n = std::min(ref->steps.size(), c.steps.size());
    if (n == 0) return -1;
    double m = 0;
    for (size_t i = 0; i < n; ++i) m = std::max(m, std::abs(c.steps[i].loss - ref->steps[i].loss));
    return m;
}

QVariant TrainSummaryModel::data(const QModelIndex& index, int role) const {
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const TrainNumericsCurve& c = curves_[static_cast<size_t>(index.row())];
    const int col = index.column();
    if (role == Qt::ToolTipRole) return c.error.empty() ? QVariant() : QVariant(qstr(c.error));
    if (role == Qt::BackgroundRole && col == Status_ && c.status != Status::Ok)
        return QBrush(QColor(0xd3, 0x2f, 0x2f, 60));
    if (role == Qt::BackgroundRole && col == Precision_) {
        const QColor t = dtypeTint(qstr(toString(c.precision)));
        return t.isValid() ? QVariant(QBrush(t)) : QVariant();
    }
    if (role == Qt::TextAlignmentRole)
        return col <= Status_ ? QVariant(Qt::AlignLeft | Qt::AlignVCenter)
                              : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    const bool raw = role == ValueRole;
    if (role != Qt::DisplayRole && !raw) return {};
    const bool scaled = !c.steps.empty() && c.steps.front().loss_scale > 0;
    auto none = [&]() -> QVariant { return raw ? QVariant() : QVariant(QStringLiteral("-")); };
    switch (col) {
        case Precision_:
            return qstr(toString(c.precision));
        case Status_:
            return qstr(toString(c.status));
        case FirstLoss:
            if (c.steps.empty()) return none();
            return raw ? QVariant(c.steps.front().loss)
                       : QVariant(QString::number(c.steps.front().loss, 'f', 4));
        case FinalLoss:
            if (c.steps.empty()) return none();
            return raw ? QVariant(c.finalLoss()) : QVariant(QString::number(c.finalLoss(), 'f', 4));
        case MaxDiff: {
            const double d = maxDiffToFp32(c);
            if (d < 0) return none();
            return raw ? QVariant(d) : QVariant(QString::number(d, 'e', 2));
        }
        case Skipped:
            if (!scaled) return none();
            return c.skippedSteps();
        case ScaleFirst:
            if (!scaled) return none();
            return raw ? QVariant(c.steps.front().loss_scale)
                       : QVariant(QString::number(c.steps.front().loss_scale, 'g', 12));
        case ScaleLast:
            if (!scaled) return none();
            return raw ? QVariant(c.steps.back().loss_scale)
                       : QVariant(QString::number(c.steps.back().loss_scale, 'g', 12));
        case Underflow: {
            int64_t m = 0;
            for (const auto& s : c.steps) m = std::max(m, s.fp16_underflow);
            return raw ? QVariant(static_cast<qlonglong>(m))
                       : QVariant(tr("%1 of %2").arg(m).arg(c.grad_elements));
        }
    }
    return {};
}

void TrainSummaryModel::clear() {
    beginResetModel();
    curves_.clear();
    endResetModel();
}

void TrainSummaryModel::add(const TrainNumericsCurve& c) {
    // A new fp32 curve changes every other row's difference: reset rather than insert.
    beginResetModel();
    curves_.push_back(c);
    endResetModel();
}

}  // namespace ts::ui
