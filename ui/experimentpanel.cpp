// The interface has no code of its own; this file keeps moc's output for it in the library.
#include "experimentpanel.h"
