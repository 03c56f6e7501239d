// Presentation mode: large fonts and high-contrast charts (Theme) and the results alone, the
// docks (experiment, history, log) hidden. Leaving restores the window's layout as it was,
// dock sizes included; while it is on, the layout worth saving is the one from before.
#pragma once

#include <QByteArray>
#include <QList>
#include <QObject>

class QDockWidget;
class QMainWindow;

namespace ts::ui {

class PresentationMode : public QObject {
    Q_OBJECT
public:
    PresentationMode(QMainWindow* window, QList<QDockWidget*> docks);

    // Entering, `returnTo` is the layout that leaving restores (default: the current one; at
    // start-up the saved one, before the large fonts have widened anything).
    void setActive(bool on, const QByteArray& returnTo = {});
    bool isActive() const { return active_; }
    // QMainWindow::saveState() as the user arranged it: from before presentation mode.
    QByteArray userLayout() const;

Q_SIGNALS:
    // The layout is back (after leaving, once the normal fonts have settled).
    void restored();

private:
    QMainWindow* window_;
    QList<QDockWidget*> docks_;
    QByteArray before_;
    bool active_ = false;
};

}  // namespace ts::ui
