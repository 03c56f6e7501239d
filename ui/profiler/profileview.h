// The profiler lab's results: Kernels (the kernel table with a phase and a range filter and
// a name search), Ops (the op table with FLOPs and TFLOP/s), Categories (one stacked bar per
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

namespace ts::ui {

class AttentionPartsChart;
class CategoryChart;
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
    QList<ReportPart> reportParts() const override;

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

private:
    void begin(const QString& label, const std::string& specJson);
    void present(ProfileAnalysis a);  // fills every pane
    Filters makeFilterBar(QWidget* parent, QLayout* into, bool kernels);
    void refilter(bool kernels);
    void writeTraceInteractive();

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
    CategoryChart* categoryChart_;
    AttentionPartsChart* attentionChart_;
    TimelineChart* timeline_;
    DataTableView *kernelTable_, *opTable_, *categoryTable_, *attentionTable_, *phaseTable_,
        *activityTable_;
    Filters kernelBar_{}, opBar_{};
    QLabel *kernelNote_, *phaseNote_, *activityLabel_;
    QList<QPushButton*> traceButtons_;
};

}  // namespace ts::ui
