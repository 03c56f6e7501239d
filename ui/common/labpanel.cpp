// The interface and the helpers its panels share; this file also keeps moc's output for it.
#include "common/labpanel.h"

#include <QVariant>

namespace ts::ui {

void LabPanel::flagField(QWidget* w, const QStringList& messages, const QString& base_tooltip) {
    const bool invalid = !messages.isEmpty();
    if (w->property("invalid").toBool() != invalid) {
        w->setProperty("invalid", invalid);
        // A style sheet on the flagged widget only: a panel-wide one would stop the
        // application font (presentation mode) from reaching the fields.
        w->setStyleSheet(invalid ? QStringLiteral("%1#%2 { border: 2px solid #e53935; border-radius: 3px; }")
                                       .arg(QLatin1String(w->metaObject()->className()), w->objectName())
                                 : QString());
    }
    w->setToolTip(invalid ? messages.join(QLatin1Char('\n')) +
                                (base_tooltip.isEmpty() ? QString() : QStringLiteral("\n\n") + base_tooltip)
                          : base_tooltip);
}

}  // namespace ts::ui
