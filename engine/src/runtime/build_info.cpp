#include "runtime/build_info.h"

// Note [a clone's path in no object]: CI builds a fresh clone in a folder of its own, with
// the ccache the session's builds filled. ccache hits across folders (CCACHE_BASEDIR makes
// the paths on a command line relative), except where a path or a commit is inside a value:
// a -D with the source tree's path, Qt Test's QT_TESTCASE_BUILDDIR/SOURCEDIR, the working
// folder that -g puts in the debug information. Each such miss recompiled a heavy file (the
// LibTorch headers: 5 to 45 s on CI's two cores), about four minutes of a CI run in all. So:
// the source tree's paths and the commit are compiled into this file alone (no heavy header,
// a tenth of a second); the tests get their folders and programs from CTest's environment
// (tests/common/test_paths.h) rather than from -D; CMakeLists.txt has ccache leave Qt Test's
// two definitions and the working folder out of the hash (they only locate QFINDTESTDATA's
// files, which no test uses, and the debug information's folder). One path stays in: GCC
// writes the build's own folder into a precompiled header, and an object that includes one
// hashes the header's bytes; so .ci/run builds through a link at one fixed path to its clone,
// and a clean clone's .ci/run before a session stops leaves CI every object it needs.

#ifndef TRAINSCOPE_RUNNER_DIR
#define TRAINSCOPE_RUNNER_DIR ""
#endif
#ifndef TRAINSCOPE_DEFAULT_PYTHON
#define TRAINSCOPE_DEFAULT_PYTHON ""
#endif
#ifndef TRAINSCOPE_GIT_COMMIT
#define TRAINSCOPE_GIT_COMMIT ""
#endif
#ifndef TRAINSCOPE_VERSION
#define TRAINSCOPE_VERSION ""
#endif

namespace ts::build {

const char* runnerDir() { return TRAINSCOPE_RUNNER_DIR; }
const char* defaultPython() { return TRAINSCOPE_DEFAULT_PYTHON; }
const char* gitCommit() { return TRAINSCOPE_GIT_COMMIT; }
const char* version() { return TRAINSCOPE_VERSION; }

}  // namespace ts::build
