// What a lab shows of its runs: a view with one tab (pane) per chart or table. The main
// window hands it the events of its live runs, its stored runs and its replays, and asks it
// what an export or the run report holds; the window knows no lab by name.
#pragma once

#include <QJsonObject>
#include <QList>
#include <QString>
#include <QVariant>
#include <QWidget>

#include "ui/common/exporter.h"
#include "ui/common/overlay.h"
#include "ui/common/runcontroller.h"
#include "ui/common/storeaccess.h"

class QComboBox;
class QTabWidget;

namespace ts::ui {

class DataTableView;
class ExportableChart;

class LabView : public QWidget {
    Q_OBJECT
public:
    struct Pane {
        QString key;    // for scripts and presets: "steps", "attention"
        QString title;  // the tab's text: "&Steps"
        QWidget* widget = nullptr;
        ExportableChart* chart = nullptr;  // what Export and Copy take (chart first)
        DataTableView* table = nullptr;
    };

    explicit LabView(QWidget* parent = nullptr);

    const QList<Pane>& panes() const { return panes_; }
    int paneIndex(const QString& key) const;  // -1 when absent
    int currentPane() const;
    void showPane(int index);
    QTabWidget* tabs() const { return tabs_; }

    // A live run of this lab starts (the view empties itself).
    virtual void beginRun(const LabJob& job) = 0;
    virtual void runStarted(qint64 storeRunId, const Environment& env) = 0;
    // The items the run's job posted (JobObserver::item), in order, in batches.
    virtual void addItems(const QList<QVariant>& items) = 0;
    // A stored run, all at once; false with `error` when its rows cannot be read. A view that
    // reads a large run in a pool thread is loading() until it emits storedRunLoaded.
    virtual bool showStored(const StoredRun& run, QString* error) = 0;
    virtual bool loading() const { return false; }

    // History's Replay and Compare. The default: this lab has neither, and says why (an
    // empty reason: the lab has it).
    virtual QString replayUnavailable() const;
    virtual void replay(const StoredRun& run, double speed);
    virtual bool isReplaying() const { return false; }
    virtual void stopReplay() {}
    virtual QString compareUnavailable() const;
    virtual bool compare(const StoredRun& a, const StoredRun& b, QString* error);

    // History's Overlay Selected: runs of this lab laid over each other (`plot`, as
    // combineOverlays made it of `runs`) on one chart, the pane "overlay", added the first time
    // and shown, with a choice of the metric drawn where the lab has several. It stays until
    // the next overlay; the lab's other panes go on showing their run.
    void showOverlay(std::vector<OverlaidRun> runs, OverlayPlot plot);
    QComboBox* overlayMetric() const { return overlayMetric_; }
    OverlayChart* overlayChart() const { return overlayChart_; }
    OverlayModel* overlayModel() const { return overlayModel_; }
    // What exporting pane `pane` carries: the overlaid runs for the overlay's pane, else
    // exportContext(pane).
    ExportContext paneContext(int pane) const;

    // File ▸ Import Trace…: the files this lab reads that another tool wrote (name filters,
    // "*.json"; empty: none), and the import: the file read, stored as a run of this lab in the
    // store at `storePath` (History lists it) and shown; false with `error` saying why (a file
    // that is not such a trace, a store that cannot be written).
    virtual QStringList importPatterns() const { return {}; }
    virtual bool importFile(const QString& path, const QString& storePath, QString* error);

    // A classroom preset's "view" settings; the default shows the pane named by "tab".
    virtual void applyPresetView(const QJsonObject& view);

    // What exporting pane `pane` carries besides its data (the default: the shown run's header
    // below), and the run report's parts.
    virtual ExportContext exportContext(int pane) const;
    virtual QList<ReportPart> reportParts() const = 0;
    // The shown run in a few words, for the window title (the default: the export's title).
    virtual QString runTitle() const;
    virtual qint64 storeRunId() const { return storeRunId_; }

Q_SIGNALS:
    void exportRequested(int pane);  // a pane's own Export… button
    void copyRequested(int pane);
    void titleChanged();
    void logLine(const QString& text);
    void statusText(const QString& text);
    void progress(double fraction, double etaSeconds);  // of a replay
    void replayFinished(bool stopped);
    // A stored run that showStored began reading in a pool thread is shown (`error` empty) or
    // could not be read.
    void storedRunLoaded(const QString& error);
    // Asks the window to open lab `lab` (its id) with the training point `point` (its JSON:
    // core/point_json.h), labelled `title`, and to start it when `run`: "Profile This Point"
    // of a benchmark result. The window asks that lab's entry how it takes a point (labs.h),
    // so that no lab includes another's.
    void openPointInLab(const QString& lab, const QJsonObject& point, const QString& title,
                        bool run);

protected:
    // The shown run's header, as every lab keeps it: its label, its id in the store (0: not
    // stored), the environment it ran in, its configuration in words and as JSON.
    QString label_, configuration_, configurationJson_;
    qint64 storeRunId_ = 0;
    Environment env_;
    // Adds a tab; its chart's and table's Export… and Copy buttons reach the window.
    int addPane(const Pane& pane);
    // The environment of a stored run as the store has it (see RunInfo::environment_json; a run
    // stored before it did: its device alone), then what its rows know fills the rest.
    void showStoredEnvironment(const RunInfo& info);
    void takeEnvironment(const Environment& e);

private Q_SLOTS:
    void onPaneExport();
    void onPaneCopy();

private:
    int paneOf(const QObject* sender) const;
    QTabWidget* tabs_;
    QList<Pane> panes_;
    OverlayModel* overlayModel_ = nullptr;
    OverlayChart* overlayChart_ = nullptr;
    QComboBox* overlayMetric_ = nullptr;
    std::vector<OverlaidRun> overlayRuns_;
    void drawOverlayBy(int metric);
};

}  // namespace ts::ui
