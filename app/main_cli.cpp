// trainscope-cli's entry point; the commands are the cli_*.cpp files (see app/cli_main.cpp).
#include <unistd.h>

#include <cstdio>
#include <iostream>

#include "cli_common.h"

// Note [a CLI process skips static destructors]: once a command has returned, everything it
// opened is closed (stores, files, runners and ranks are owned by the command's scope) and its
// output is flushed below; what static destructors are left to run is LibTorch's, which walk
// its operator tables to free them, about 0.1 s of CPU for each of the hundreds of CLI and rank
// processes a sweep or a test suite starts. The process ends with _exit instead, after flushing
// C's and C++'s streams. A command that must leave something behind does it before it returns.
int main(int argc, char** argv) {
    const int code = ts::cli::runCommandLine(argc, argv);
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    ::_exit(code);
}
