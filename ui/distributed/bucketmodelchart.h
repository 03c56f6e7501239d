// The course's bucket-size question as a chart (QCustomPlot): the wait after backward that the
// bucket-size model predicts for every bucket size (a line, log axis), the bucketed points' own
// waits at their sizes (markers), and the model's best size (a diamond), one colour a
// configuration. Views bucketModels() (engine: distributed/ddp_buckets.h).
#pragma once

#include <vector>

#include "distributed/ddp_buckets.h"
#include "ui/common/qcpchart.h"

namespace ts::ui {

class BucketModelChart : public QcpChart {
    Q_OBJECT
public:
    explicit BucketModelChart(QWidget* parent = nullptr);
    void setModels(const std::vector<BucketModel>& models);
    // What is drawn, for tests: the predicted curves, and the measured points over all of them.
    int curveCount() const { return curves_; }
    int measuredCount() const { return measured_; }
    // What the chart shows, the fit and the best size (a sentence or two, under the chart).
    QString explanation() const { return explanation_; }

private:
    int curves_ = 0, measured_ = 0;
    QString explanation_;
};

}  // namespace ts::ui
