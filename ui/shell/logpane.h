// The Log pane: what runs, History and exports say, one timestamped line each, in a fixed-width
// font that follows the theme's scale. Lines come in bursts; the pane takes them at most ten
// times a second.
#pragma once

#include <QPlainTextEdit>
#include <QStringList>

namespace ts::ui {

class RedrawThrottle;

class LogPane : public QPlainTextEdit {
    Q_OBJECT
public:
    explicit LogPane(QWidget* parent = nullptr);

    void append(const QString& line);
    QString text() const;  // every line, those still pending included

private:
    void takeFont();
    QStringList pending_;
    RedrawThrottle* throttle_;
};

}  // namespace ts::ui
