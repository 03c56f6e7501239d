// Test access to the main window: a fresh one for a test, and the labs' views inside it.
#pragma once

#include <QApplication>
#include <QSettings>
#include <memory>

#include "ui/attention/attentionview.h"
#include "ui/benchmark/benchview.h"
#include "ui/shell/mainwindow.h"

inline ts::ui::BenchView* benchViewOf(const ts::ui::MainWindow* w) {
    return qobject_cast<ts::ui::BenchView*>(w->labView(QStringLiteral("bench")));
}
inline ts::ui::AttentionView* attentionViewOf(const ts::ui::MainWindow* w) {
    return qobject_cast<ts::ui::AttentionView*>(w->labView(QStringLiteral("attention")));
}

// A main window on store `db`, with settings of its own (`testName`) cleared and nothing
// restored, shown at 1400×900. The caller waits for it to be exposed.
inline std::unique_ptr<ts::ui::MainWindow> freshWindow(const char* testName, const QString& db) {
    QApplication::setOrganizationName(QStringLiteral("TrainScopeTest"));
    QApplication::setApplicationName(QString::fromLatin1(testName));
    QSettings().clear();
    auto w = std::make_unique<ts::ui::MainWindow>(ts::ui::MainWindow::Options{db, false});
    w->resize(1400, 900);
    w->show();
    return w;
}
