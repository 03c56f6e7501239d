#include "ui/profiler/profilemodels.h"

#include "ui/common/format.h"

namespace ts::ui {

namespace {
QString num(double v, int decimals) { return QString::number(v, 'f', decimals); }
QString us(double v) { return num(v, v >= 1000 ? 0 : v >= 10 ? 1 : 2); }
// GFLOPs to three figures: a tiny model's attention has thousandths of one.
QString flopsText(double f) {
    return f > 0 ? (f >= 1e11 ? num(f / 1e9, 0) : QString::number(f / 1e9, 'g', 3))
                 : QStringLiteral("—");
}
QString phaseName(Phase p) { return qstr(toString(p)); }
}  // namespace

KernelTableModel* makeKernelTableModel(QObject* parent) {
    using R = KernelRow;
    return new KernelTableModel(
        {{QObject::tr("Kernel"), [](const R& r) { return QVariant(qstr(r.name)); }, {}},
         {QObject::tr("Category"),
          [](const R& r) { return QVariant(qstr(toString(r.category))); },
          {}},
         {QObject::tr("Time %"), [](const R& r) { return QVariant(r.percent); },
          [](const R& r) { return num(r.percent, 1); }},
         {QObject::tr("Total (µs)"), [](const R& r) { return QVariant(r.total_us); },
          [](const R& r) { return us(r.total_us); }},
         {QObject::tr("Instances"),
          [](const R& r) { return QVariant(static_cast<qlonglong>(r.instances)); },
          {}},
         {QObject::tr("Avg (µs)"), [](const R& r) { return QVariant(r.avg_us); },
          [](const R& r) { return us(r.avg_us); }},
         {QObject::tr("Median (µs)"), [](const R& r) { return QVariant(r.median_us); },
          [](const R& r) { return us(r.median_us); }},
         {QObject::tr("Min (µs)"), [](const R& r) { return QVariant(r.min_us); },
          [](const R& r) { return us(r.min_us); }},
         {QObject::tr("Max (µs)"), [](const R& r) { return QVariant(r.max_us); },
          [](const R& r) { return us(r.max_us); }},
         {QObject::tr("Std (µs)"), [](const R& r) { return QVariant(r.std_us); },
          [](const R& r) { return us(r.std_us); }}},
        parent);
}

ProfileDiffModel* makeProfileDiffModel(QObject* parent) {
    using R = ProfileDiffRow;
    auto side = [](bool in, double v) { return in ? QVariant(v) : QVariant(); };
    return new ProfileDiffModel(
        {{QObject::tr("Name"), [](const R& r) { return QVariant(qstr(r.name)); }, {}},
         {QObject::tr("Category"),
          [](const R& r) { return QVariant(qstr(toString(r.category))); },
          {}},
         {QObject::tr("A (µs/step)"), [side](const R& r) { return side(r.in_a, r.a_us); },
          [](const R& r) { return r.in_a ? us(r.a_us) : QStringLiteral("—"); }},
         {QObject::tr("B (µs/step)"), [side](const R& r) { return side(r.in_b, r.b_us); },
          [](const R& r) { return r.in_b ? us(r.b_us) : QStringLiteral("—"); }},
         {QObject::tr("B − A (µs)"), [](const R& r) { return QVariant(r.delta_us); },
          [](const R& r) {
              return (r.delta_us > 0 ? QStringLiteral("+") : QString()) + us(r.delta_us);
          }},
         {QObject::tr("B / A"),
          [](const R& r) { return r.ratio ? QVariant(*r.ratio) : QVariant(); },
          [](const R& r) {
              return r.ratio ? QStringLiteral("%1×").arg(*r.ratio, 0, 'f', 2) : QStringLiteral("—");
          }},
         {QObject::tr("A calls/step"), [side](const R& r) { return side(r.in_a, r.a_calls); },
          [](const R& r) {
              return r.in_a ? QString::number(r.a_calls, 'g', 4) : QStringLiteral("—");
          }},
         {QObject::tr("B calls/step"), [side](const R& r) { return side(r.in_b, r.b_calls); },
          [](const R& r) {
              return r.in_b ? QString::number(r.b_calls, 'g', 4) : QStringLiteral("—");
          }},
         {QObject::tr("Note"), [](const R& r) { return QVariant(qstr(r.note)); }, {}}},
        parent);
}

OpTableModel* makeOpTableModel(QObject* parent) {
    using R = OpRow;
    return new OpTableModel(
        {{QObject::tr("Op"), [](const R& r) { return QVariant(qstr(r.name)); }, {}},
         {QObject::tr("Calls"),
          [](const R& r) { return QVariant(static_cast<qlonglong>(r.calls)); },
          {}},
         {QObject::tr("Self CPU (µs)"), [](const R& r) { return QVariant(r.cpu_self_us); },
          [](const R& r) { return us(r.cpu_self_us); }},
         {QObject::tr("CPU total (µs)"), [](const R& r) { return QVariant(r.cpu_total_us); },
          [](const R& r) { return us(r.cpu_total_us); }},
         {QObject::tr("Device (µs)"), [](const R& r) { return QVariant(r.device_us); },
          [](const R& r) { return us(r.device_us); }},
         {QObject::tr("GFLOPs"), [](const R& r) { return QVariant(r.flops / 1e9); },
          [](const R& r) { return flopsText(r.flops); }},
         {QObject::tr("TFLOP/s"), [](const R& r) { return QVariant(r.tflops); },
          [](const R& r) {
              return r.tflops > 0 ? num(r.tflops, r.tflops >= 10 ? 1 : 3) : QStringLiteral("—");
          }},
         {QObject::tr("Input shapes"), [](const R& r) { return QVariant(qstr(r.shapes)); }, {}}},
        parent);
}

CategoryTableModel* makeCategoryTableModel(QObject* parent) {
    using R = CategoryRow;
    return new CategoryTableModel(
        {{QObject::tr("Phase"), [](const R& r) { return QVariant(phaseName(r.phase)); }, {}},
         {QObject::tr("Category"),
          [](const R& r) { return QVariant(qstr(toString(r.category))); },
          {}},
         {QObject::tr("Time (µs)"), [](const R& r) { return QVariant(r.time_us); },
          [](const R& r) { return us(r.time_us); }},
         {QObject::tr("Share %"), [](const R& r) { return QVariant(r.share * 100); },
          [](const R& r) { return num(r.share * 100, 1); }}},
        parent);
}

AttentionPartModel* makeAttentionPartModel(QObject* parent) {
    using R = AttentionPart;
    return new AttentionPartModel(
        {{QObject::tr("Phase"), [](const R& r) { return QVariant(phaseName(r.phase)); }, {}},
         {QObject::tr("Part"), [](const R& r) { return QVariant(qstr(r.part)); }, {}},
         {QObject::tr("Time per step (µs)"), [](const R& r) { return QVariant(r.time_us); },
          [](const R& r) { return us(r.time_us); }},
         {QObject::tr("Kernels (CPU: ops) per step"),
          [](const R& r) { return QVariant(r.kernels); },
          [](const R& r) { return num(r.kernels, 1); }},
         {QObject::tr("GFLOPs"), [](const R& r) { return QVariant(r.flops / 1e9); },
          [](const R& r) { return flopsText(r.flops); }},
         {QObject::tr("MB moved"), [](const R& r) { return QVariant(r.bytes / 1e6); },
          [](const R& r) { return num(r.bytes / 1e6, 1); }},
         {QObject::tr("ns per MFLOP"), [](const R& r) { return QVariant(r.ns_per_mflop); },
          [](const R& r) {
              return r.ns_per_mflop > 0 ? num(r.ns_per_mflop, 2) : QStringLiteral("—");
          }}},
        parent);
}

PhaseTimeModel* makePhaseTimeModel(QObject* parent) {
    using R = PhaseTime;
    return new PhaseTimeModel(
        {{QObject::tr("Phase"), [](const R& r) { return QVariant(phaseName(r.phase)); }, {}},
         {QObject::tr("Profiled (ms)"), [](const R& r) { return QVariant(r.profiled_us / 1e3); },
          [](const R& r) { return formatMs(r.profiled_us / 1e3); }},
         {QObject::tr("Measured (ms)"), [](const R& r) { return QVariant(r.measured_us / 1e3); },
          [](const R& r) {
              return r.phase == Phase::Other ? QStringLiteral("—") : formatMs(r.measured_us / 1e3);
          }},
         {QObject::tr("Profiled / measured"),
          [](const R& r) {
              return QVariant(r.measured_us > 0 ? r.profiled_us / r.measured_us : 0.0);
          },
          [](const R& r) {
              return r.measured_us > 0
                         ? num(100 * r.profiled_us / r.measured_us, 0) + QLatin1Char('%')
                         : QStringLiteral("—");
          }},
         {QObject::tr("Kernels"),
          [](const R& r) { return QVariant(static_cast<qlonglong>(r.kernels)); },
          {}}},
        parent);
}

StepActivityModel* makeStepActivityModel(QObject* parent) {
    using R = StepActivity;
    return new StepActivityModel(
        {{QObject::tr("Step"), [](const R& r) { return QVariant(r.step + 1); }, {}},
         {QObject::tr("Wall (ms)"), [](const R& r) { return QVariant(r.wall_us / 1e3); },
          [](const R& r) { return formatMs(r.wall_us / 1e3); }},
         {QObject::tr("GPU busy (ms)"), [](const R& r) { return QVariant(r.busy_us / 1e3); },
          [](const R& r) { return formatMs(r.busy_us / 1e3); }},
         {QObject::tr("GPU idle (ms)"), [](const R& r) { return QVariant(r.idle_us / 1e3); },
          [](const R& r) { return formatMs(r.idle_us / 1e3); }},
         {QObject::tr("Busy %"),
          [](const R& r) { return QVariant(r.wall_us > 0 ? 100 * r.busy_us / r.wall_us : 0.0); },
          [](const R& r) {
              return r.wall_us > 0 ? num(100 * r.busy_us / r.wall_us, 1) : QStringLiteral("—");
          }},
         {QObject::tr("Launch-bound %"), [](const R& r) { return QVariant(100 * r.launch_bound); },
          [](const R& r) { return num(100 * r.launch_bound, 1); }},
         {QObject::tr("Idle gaps"),
          [](const R& r) { return QVariant(static_cast<qlonglong>(r.gap_count)); },
          {}}},
        parent);
}

NameFilterModel::NameFilterModel(QObject* parent) : QSortFilterProxyModel(parent) {
    setSortRole(KernelTableModel::ValueRole);
}

void NameFilterModel::setSearch(const QString& text) {
    search_ = text.trimmed();
    invalidateFilter();
}

bool NameFilterModel::filterAcceptsRow(int row, const QModelIndex& parent) const {
    if (search_.isEmpty()) return true;
    const QModelIndex name = sourceModel()->index(row, 0, parent);
    return sourceModel()
        ->data(name, Qt::DisplayRole)
        .toString()
        .contains(search_, Qt::CaseInsensitive);
}

}  // namespace ts::ui
