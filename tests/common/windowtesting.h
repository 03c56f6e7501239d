// Test access to the labs' views inside the main window.
#pragma once

#include "attention/attentionview.h"
#include "benchmark/benchview.h"
#include "shell/mainwindow.h"

inline ts::ui::BenchView* benchViewOf(const ts::ui::MainWindow* w) {
    return qobject_cast<ts::ui::BenchView*>(w->labView(QStringLiteral("bench")));
}
inline ts::ui::AttentionView* attentionViewOf(const ts::ui::MainWindow* w) {
    return qobject_cast<ts::ui::AttentionView*>(w->labView(QStringLiteral("attention")));
}
