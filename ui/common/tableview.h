// A table of the window: right-click (or Ctrl+C) copies it, with the run's environment, or
// exports it to CSV / Markdown.
#pragma once

#include <QTableView>

namespace ts::ui {

class DataTableView : public QTableView {
    Q_OBJECT
public:
    explicit DataTableView(QWidget* parent = nullptr);
    void setModel(QAbstractItemModel* model) override;
    // Every column at least as wide as its header (cheap: rows are not measured, which
    // matters for a million-row step table).
    void fitColumnsToHeaders();
    QString tableTitle() const { return title_; }
    QString fileStem() const { return stem_; }
    void setTitle(const QString& title, const QString& fileStem) {
        title_ = title;
        stem_ = fileStem;
    }
    // Said over the table while it has no row: what comes, and from what (issue 29 item 7).
    void setEmptyText(const QString& text);
    QString emptyText() const { return empty_; }
    bool showsEmptyText() const;

Q_SIGNALS:
    void exportRequested();
    void copyRequested();

protected:
    void keyPressEvent(QKeyEvent* e) override;
    void changeEvent(QEvent* e) override;
    void paintEvent(QPaintEvent* e) override;

private:
    QString title_, stem_, empty_;
};

}  // namespace ts::ui
