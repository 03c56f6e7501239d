// The labs the window offers (ui/labs.cpp's registry), one panel and one view each, and which
// of them is shown: the lab chooser above the panels (the Experiment dock's contents), the
// views stacked in the centre under a banner that says when the shown run was deleted from the
// store, the panes by key, and which store's run each view shows. It passes on what its panels
// and views ask of the window, so that the window's parts connect to one object, not to every
// lab. It names no lab.
#pragma once

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QSet>
#include <QString>
#include <utility>

class QComboBox;
class QLabel;
class QStackedWidget;
class QWidget;

namespace ts::ui {

class LabPanel;
class LabView;
class RunController;

class LabDeck : public QObject {
    Q_OBJECT
public:
    struct Lab {
        QString id, title;
        LabPanel* panel;
        LabView* view;
    };

    // `controller` says whether a live run goes on (the shown lab stays while one does).
    LabDeck(const RunController* controller, QWidget* window);

    QWidget* chooser() const { return chooser_; }  // the chooser and the panels
    QWidget* centre() const { return centre_; }    // the views under the deleted-run banner

    const QList<Lab>& labs() const { return labs_; }
    int indexOf(const QString& id) const;  // -1 when unknown
    LabPanel* panel(const QString& id) const;
    LabView* view(const QString& id) const;
    int currentIndex() const;
    QString currentId() const;  // the shown lab's id ("bench", "profile", ...)
    LabPanel* currentPanel() const;
    LabView* currentView() const;

    // A live run or a replay goes on: the shown lab cannot change.
    bool busy() const;
    bool replaying() const;
    void stopReplays();
    // The chooser and the panels take no input (while a run goes on).
    void setLocked(bool locked);
    // Shows lab `id`'s panel and view; false when unknown or while busy.
    bool select(const QString& id);
    // Shows the pane named `key` ("steps", "attention", or "lab.key" where labs share it) of the
    // shown lab, else of the first lab that has it; false when none has.
    bool showPane(const QString& key);
    // The lab and pane showing `key`, or {-1, -1}.
    std::pair<int, int> findPane(const QString& key) const;
    // Every pane's key, each once; one that several labs share also as "lab.key".
    QStringList paneKeys() const;

    // `view` now shows a run of the store at `store` (a live run, an opened one, a replay, a
    // comparison); it is no longer marked deleted.
    void noteShown(LabView* view, const QString& store);
    // Whether `view` has shown a run since the window opened.
    bool showsRun(const LabView* view) const;
    // Run `id` of `store` was deleted: the views that show it are marked so (their exports are
    // refused); returns those views' lab titles.
    QStringList markDeleted(const QString& store, qint64 id);
    // Why pane exports of `view` are refused (its run was deleted from the store); empty when not.
    QString deletedRunNote(const LabView* view) const;

Q_SIGNALS:
    void currentChanged(int index);
    // The window title may read otherwise: another lab shown, a view's run renamed, shown,
    // loaded or deleted.
    void titleChanged();
    // From the panels: a field changed; Ctrl+Enter in a field.
    void panelChanged();
    void runRequested();
    // From the views (LabView's signals of the same names).
    void exportRequested(ts::ui::LabView* view, int pane);
    void copyRequested(ts::ui::LabView* view, int pane);
    void logLine(const QString& text);
    void statusText(const QString& text);
    void progress(double fraction, double etaSeconds);
    void replayFinished();
    void openPointInLab(const QString& lab, const QJsonObject& point, const QString& title,
                        bool run);

private:
    void buildViews(QWidget* window);
    void buildChooser(QWidget* window);
    void connectView(LabView* view);
    void fitPanels();
    void updateBanner();

    const RunController* controller_;
    QList<Lab> labs_;
    QWidget* chooser_ = nullptr;
    QWidget* centre_ = nullptr;
    QComboBox* combo_ = nullptr;
    QStackedWidget* panels_ = nullptr;
    QStackedWidget* views_ = nullptr;
    QLabel* deletedBanner_ = nullptr;
    QHash<const LabView*, QString> shownStore_;  // the store of the run each view shows
    QSet<const LabView*> deleted_;               // views whose run was deleted from it
};

}  // namespace ts::ui
