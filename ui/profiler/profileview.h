// The profiler lab's results: Kernels (the kernel table with a phase and a range filter and
// a name search), Ops (the op table with FLOPs and TFLOP/s), Call Tree (a flame graph and a
// tree table of the ops' nesting by phase and range), Categories (one stacked bar per
// phase), Attention (scores, softmax, values or one fused kernel), Timeline (one profiled step,
// CPU above, GPU streams below, idle gaps shaded) and Phases (profiled against measured time,
// the GPU's busy and idle time per step). Tables are computed off the UI thread: the whole
// profile's in the run's worker, a stored run's and each filter's in a pool thread.
#pragma once

#include <QPointer>
#include <memory>

#include "ui/common/labview.h"
#include "ui/profiler/profileanalysis.h"
#include "ui/profiler/profilemodels.h"

class QComboBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QTreeView;

namespace ts::ui {

class AttentionPartsChart;
class CallTreeModel;
class CategoryChart;
class FlameGraph;
class TimelineChart;

class ProfileView : public LabView {
    Q_OBJECT
public:
    explicit ProfileView(QWidget* parent = nullptr);

    void beginRun(const LabJob& job) override;
    void runStarted(qint64 storeRunId, const Environment& env) override;
    void addItems(const QList<QVariant>& items) override;
    // Parses and analyses the stored profile in a pool thread; the panes fill when it is done
    // (profileShown), or the log says why it could not be read.
    bool showStored(const StoredRun& run, QString* error) override;
    // What History's Overlay Selected draws of a stored run (ui/common/overlay.h).
    static RunOverlay overlayOf(const StoredRun& run);
    QList<ReportPart> reportParts() const override;
    // History's Compare: run `a` in the panes, and both runs' kernel tables side by side in the
    // Compare pane (parsed and compared in a pool thread: comparisonShown when it is filled).
    QString compareUnavailable() const override { return {}; }
    bool compare(const StoredRun& a, const StoredRun& b, QString* error) override;
    ProfileDiffModel* diffModel() const { return diff_; }
    QString comparisonText() const;
    ExportContext exportContext(int pane) const override;
    // A torch.profiler Chrome trace (See Note [importing a trace]): stored, then shown.
    QStringList importPatterns() const override { return {QStringLiteral("*.json")}; }
    bool importFile(const QString& path, const QString& storePath, QString* error) override;

    // The profile shown (null before one arrives).
    const ProfileResult* result() const { return analysis_.result.get(); }
    // Writes the shown profile as a Chrome / Perfetto trace; false with `error` when it cannot.
    bool writeTrace(const QString& path, QString* error) const;

    // For tests and scripts.
    KernelTableModel* kernelModel() const { return kernels_; }
    OpTableModel* opModel() const { return ops_; }
    NameFilterModel* kernelFilter() const { return kernelFilter_; }
    NameFilterModel* opFilter() const { return opFilter_; }
    CategoryTableModel* categoryModel() const { return categories_; }
    AttentionPartModel* attentionModel() const { return attention_; }
    PhaseTimeModel* phaseModel() const { return phases_; }
    StepActivityModel* activityModel() const { return activity_; }
    CategoryChart* categoryChart() const { return categoryChart_; }
    TimelineChart* timeline() const { return timeline_; }
    CallTreeModel* callTreeModel() const { return callTree_; }
    FlameGraph* flameGraph() const { return flame_; }
    QTreeView* callTreeView() const { return callTreeView_; }
    QComboBox* flameMeasure() const { return flameMeasure_; }
    struct Filters {
        QComboBox* phase;
        QComboBox* range;
        QLineEdit* search;
    };
    Filters kernelFilters() const { return kernelBar_; }
    Filters opFilters() const { return opBar_; }
    int pendingJobs() const { return pending_; }  // analyses still running in the pool
    bool loading() const override { return loadingStored_; }

Q_SIGNALS:
    // A profile (live or stored) is in every pane.
    void profileShown();
    // A filtered table arrived.
    void tablesFiltered();
    // The Compare pane shows two runs (`error` empty) or says why it cannot.
    void comparisonShown(const QString& error);

private:
    void begin(const QString& label, const std::string& specJson);
    void present(ProfileAnalysis a);  // fills every pane
    Filters makeFilterBar(QWidget* parent, QLayout* into, bool kernels);
    void refilter(bool kernels);
    void writeTraceInteractive();
    QWidget* makeCallTreePage();

    quint64 generation_ = 0;
    int pending_ = 0;
    bool loadingStored_ = false;          // showStored's profile is being read in the pool
    quint64 filterRequests_[2] = {0, 0};  // kernels, ops: the latest filter asked for
    ProfileAnalysis analysis_;
    int stepsSeen_ = 0;

    KernelTableModel* kernels_;
    OpTableModel* ops_;
    NameFilterModel *kernelFilter_, *opFilter_;
    CategoryTableModel* categories_;
    AttentionPartModel* attention_;
    PhaseTimeModel* phases_;
    StepActivityModel* activity_;
    ProfileDiffModel* diff_;
    DataTableView* diffTable_;
    QLabel* diffText_;
    quint64 compareGeneration_ = 0;
    QString compareTitle_;  // "run 3 vs run 4" while a comparison is shown
    CategoryChart* categoryChart_;
    AttentionPartsChart* attentionChart_;
    TimelineChart* timeline_;
    CallTreeModel* callTree_;
    FlameGraph* flame_;
    QTreeView* callTreeView_;
    QComboBox* flameMeasure_;
    QLabel* flameZoom_;
    DataTableView *kernelTable_, *opTable_, *categoryTable_, *attentionTable_, *phaseTable_,
        *activityTable_;
    Filters kernelBar_{}, opBar_{};
    QLabel *kernelNote_, *phaseNote_, *activityLabel_;
    QList<QPushButton*> traceButtons_;
};

}  // namespace ts::ui
