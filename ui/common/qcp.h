// QCustomPlot's header spells Qt's keywords (signals, slots, foreach), which this project
// turns off because LibTorch defines `slots`. Map them to the macros for this one include.
#pragma once

#define signals Q_SIGNALS
#define slots Q_SLOTS
#define foreach Q_FOREACH
#include <qcustomplot.h>
#undef signals
#undef slots
#undef foreach
