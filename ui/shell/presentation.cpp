#include "ui/shell/presentation.h"

#include <QDockWidget>
#include <QMainWindow>
#include <QTimer>

#include "ui/common/theme.h"

namespace ts::ui {

PresentationMode::PresentationMode(QMainWindow* window, QList<QDockWidget*> docks)
    : QObject(window), window_(window), docks_(std::move(docks)) {}

void PresentationMode::setActive(bool on, const QByteArray& returnTo) {
    if (on == active_) return;
    active_ = on;
    if (on) {
        before_ = returnTo.isEmpty() ? window_->saveState() : returnTo;
        for (QDockWidget* d : docks_) d->hide();
        Theme::instance().setPresentation(true);
        return;
    }
    Theme::instance().setPresentation(false);
    // The panels' minimum widths follow the font a turn of the event loop later (see the
    // experiment dock's fitWidth); restoring before that would keep the dock as wide as the
    // large font needed.
    QTimer::singleShot(0, this, [this] {
        if (active_) return;
        window_->restoreState(before_);
        Q_EMIT restored();
    });
}

QByteArray PresentationMode::userLayout() const { return active_ ? before_ : window_->saveState(); }

}  // namespace ts::ui
