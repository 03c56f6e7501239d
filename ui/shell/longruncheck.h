// A run that will take long is confirmed, once: when the first estimate of the time left
// passes a threshold (30 minutes), a question asks whether to keep running or stop. The
// estimate comes from the run's own first steps, so it is measured, not guessed; the run goes
// on while the question is open. Scripted sessions turn it off.
#pragma once

#include <QObject>
#include <QPointer>

class QMessageBox;
class QWidget;

namespace ts::ui {

class LongRunCheck : public QObject {
    Q_OBJECT
public:
    explicit LongRunCheck(QWidget* window, double thresholdSeconds = 30 * 60);

    void setEnabled(bool on) { enabled_ = on; }
    // A new run: ask again when it, too, runs long.
    void runStarted();
    // The run's progress; asks when `etaSeconds` first passes the threshold.
    void progress(double fraction, double etaSeconds);
    // The run ended: an open question goes away.
    void runFinished();
    // The open question, if any (for tests).
    QMessageBox* question() const { return box_; }

Q_SIGNALS:
    void stopRequested();

private:
    QWidget* window_;
    double threshold_;
    bool enabled_ = true;
    bool asked_ = false;
    QPointer<QMessageBox> box_;
};

}  // namespace ts::ui
