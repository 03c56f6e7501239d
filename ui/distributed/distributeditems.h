// What a distributed job posts to its view (JobObserver::item), one value type per observer
// call of runDistributed, each carrying the index of its point in the run.
#pragma once

#include <QMetaType>
#include <string>

#include "distributed/distributed.h"

namespace ts::ui {

struct DistPointStarted {
    int index = 0;
    int count = 0;
    DistributedPoint point;
};

struct DistRankReady {
    int index = 0;
    int rank = 0;
    std::string device;
};

// One rank's step as it arrives (warm-up included).
struct DistStep {
    int index = 0;
    DdpStepRow row;
};

struct DistAllreduce {
    int index = 0;
    dist::AllreduceRow row;
};

// The point's outcome: what the view keeps (its steps replace those that arrived one by one).
struct DistPointFinished {
    int index = 0;
    DistributedResult result;
};

// Registers the types below once; safe to call again.
void registerDistributedMetaTypes();

}  // namespace ts::ui

Q_DECLARE_METATYPE(ts::ui::DistPointStarted)
Q_DECLARE_METATYPE(ts::ui::DistRankReady)
Q_DECLARE_METATYPE(ts::ui::DistStep)
Q_DECLARE_METATYPE(ts::ui::DistAllreduce)
Q_DECLARE_METATYPE(ts::ui::DistPointFinished)
