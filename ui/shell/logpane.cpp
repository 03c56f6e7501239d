#include "ui/shell/logpane.h"

#include <QDateTime>
#include <QFontDatabase>

#include "ui/common/chartstyle.h"
#include "ui/common/theme.h"

namespace ts::ui {

LogPane::LogPane(QWidget* parent) : QPlainTextEdit(parent) {
    setObjectName(QStringLiteral("log"));
    setReadOnly(true);
    setMaximumBlockCount(5000);
    takeFont();
    connect(&Theme::instance(), &Theme::changed, this, &LogPane::takeFont);
    throttle_ = new RedrawThrottle(
        [this] {
            if (pending_.isEmpty()) return;
            appendPlainText(pending_.join(QLatin1Char('\n')));
            pending_.clear();
        },
        this, 100);
}

void LogPane::takeFont() {
    QFont f = QFontDatabase::systemFont(QFontDatabase::FixedFont);
    f.setPointSizeF(f.pointSizeF() * Theme::instance().fontScale());
    setFont(f);
}

void LogPane::append(const QString& line) {
    pending_ << QDateTime::currentDateTime().toString(QStringLiteral("HH:mm:ss  ")) + line;
    throttle_->request();
}

QString LogPane::text() const {
    throttle_->flush();
    return toPlainText();
}

}  // namespace ts::ui
