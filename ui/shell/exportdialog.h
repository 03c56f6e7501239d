// Where and how big: one dialog for charts (PNG, SVG, PDF at a chosen size) and tables
// (CSV, Markdown). The path is filled in, so an export is right-click, then Save.
#pragma once

#include <QDialog>
#include <QSize>

class QCheckBox;
class QComboBox;
class QLineEdit;
class QSpinBox;

namespace ts::ui {

class ExportDialog : public QDialog {
    Q_OBJECT
public:
    enum class Kind { Chart, Table, Report };
    ExportDialog(Kind kind, const QString& suggestedPath, QSize currentSize,
                 QWidget* parent = nullptr);

    QString path() const;
    QSize size() const;
    // Charts in light colours (for paper and light slides) though the window is dark.
    bool printColours() const;
    // A table's CSV: the run's environment written beside it as JSON (on unless unticked).
    bool environmentBeside() const;

private:
    void syncSuffix();
    Kind kind_;
    QComboBox* format_;
    QComboBox* preset_ = nullptr;
    QComboBox* colours_ = nullptr;
    QCheckBox* environment_ = nullptr;
    QSpinBox* width_ = nullptr;
    QSpinBox* height_ = nullptr;
    QLineEdit* path_;
};

}  // namespace ts::ui
