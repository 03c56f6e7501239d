// The memory tests' door to PyTorch's own snapshot reader (torch.cuda._memory_viz): a python
// that has torch among TRAINSCOPE_PYTHONS (LibTorch's venv first, then the system's), and a
// script run in it.
#pragma once

#include <cstdio>
#include <sstream>
#include <string>

namespace ts::testing {

// The script's output (stdout and stderr); `code` its exit status (-1: it did not start).
inline std::string runPython(const std::string& python, const std::string& script, int& code) {
    const std::string cmd = "'" + python + "' -c \"" + script + "\" 2>&1";
    std::string out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
        char buf[4096];
        while (size_t n = fread(buf, 1, sizeof buf, p)) out.append(buf, n);
        code = pclose(p);
    } else {
        code = -1;
    }
    return out;
}

// The first of `candidates` (':'-separated) that imports torch.cuda._memory_viz, or "".
inline std::string pythonWithTorch(const std::string& candidates) {
    std::stringstream list(candidates);
    for (std::string c; std::getline(list, c, ':');) {
        int code = 0;
        runPython(c, "import torch.cuda._memory_viz", code);
        if (code == 0) return c;
    }
    return {};
}

}  // namespace ts::testing
