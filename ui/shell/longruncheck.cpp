#include "ui/shell/longruncheck.h"

#include <QMessageBox>
#include <QPushButton>

#include "ui/common/format.h"

namespace ts::ui {

LongRunCheck::LongRunCheck(QWidget* window, double thresholdSeconds)
    : QObject(window), window_(window), threshold_(thresholdSeconds) {}

void LongRunCheck::runStarted() {
    runFinished();
    asked_ = false;
}

void LongRunCheck::runFinished() {
    if (box_) box_->close();
}

void LongRunCheck::progress(double fraction, double etaSeconds) {
    if (!enabled_ || asked_ || fraction <= 0 || fraction >= 1 || etaSeconds < threshold_) return;
    asked_ = true;
    box_ = new QMessageBox(QMessageBox::Question, tr("A long run"),
                           tr("This run will take about %1 more (estimated from its first steps).")
                               .arg(formatDuration(etaSeconds)),
                           QMessageBox::NoButton, window_);
    box_->setObjectName(QStringLiteral("longRunQuestion"));
    box_->setInformativeText(
        tr("Smaller sizes, shorter contexts or fewer steps finish sooner. It keeps "
           "running while you decide; what it measures is kept either way."));
    box_->addButton(tr("Keep Running"), QMessageBox::AcceptRole);
    QPushButton* stop = box_->addButton(tr("Stop"), QMessageBox::RejectRole);
    box_->setAttribute(Qt::WA_DeleteOnClose);
    connect(box_, &QMessageBox::buttonClicked, this, [this, stop](QAbstractButton* b) {
        if (b == stop) Q_EMIT stopRequested();
    });
    box_->open();  // not modal to the event loop: the run's charts go on updating
}

}  // namespace ts::ui
