// A table for people, as the labs' reports print it: aligned text, Markdown or CSV. Torch-free.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/lab.h"

namespace ts {

struct TextTable {
    std::vector<std::string> headers;
    std::vector<bool> right;  // per column: right-aligned (numbers)
    std::vector<std::vector<std::string>> rows;
};

// Text: columns padded to their widest cell; Markdown: a pipe table (right-aligned columns
// marked); CSV: fields quoted where they must be.
std::string renderTable(const TextTable& t, TableFormat format);
// A table's title line: "### title" in Markdown, a plain line otherwise.
std::string tableHeading(const std::string& title, TableFormat format);
// Columns a string takes on a terminal: its UTF-8 code points.
size_t displayWidth(const std::string& s);
// Bytes for people: "1.50 GiB", "12.0 MiB", "3.0 KiB", "512 B".
std::string formatBytes(int64_t bytes);

}  // namespace ts
