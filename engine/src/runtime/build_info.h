// What the build knows that a clone's path or commit decides: where the source tree's Python
// runner is, the Python set-up found with torch, the commit and the version. One small file
// compiles them in, so that nothing else depends on them. See Note [a clone's path in no object].
#pragma once

namespace ts::build {

const char* runnerDir();      // the source tree's runner/ ("" where not built from one)
const char* defaultPython();  // the interpreter set-up found with torch ("" where none)
const char* gitCommit();
const char* version();

}  // namespace ts::build
