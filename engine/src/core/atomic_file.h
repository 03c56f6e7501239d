// Writing a file whole or not at all, so that an export that fails half-way (a full disk, a
// run that does not exist) never leaves a truncated file where the user's old one was.
#pragma once

#include <string>
#include <string_view>

namespace ts {

// Writes `content` to `path` through a temporary file beside it that is flushed to disk and
// then renamed over `path`: readers see the old file or the new one, never a part. A path
// that exists and is not a regular file (/dev/stdout, a pipe) is written in place, since a
// rename would replace the device node itself. Throws std::runtime_error naming the path and
// the system's reason; `path` is untouched then.
void writeFileAtomically(const std::string& path, std::string_view content);

// True when both paths name one existing file (through links, "..", hard links).
bool sameFile(const std::string& a, const std::string& b);

// Why `path` must not be written as an output (an export, a trace, a snapshot, a screenshot),
// or empty when it may: a folder; the results store `store_path` or its -wal, -shm and
// -journal files (through links and hard links); or any other SQLite database or write-ahead
// log (another results store). Every path the CLI or the window writes for the user is checked
// with this before the work starts and again just before the write.
std::string outputTargetProblem(const std::string& path, const std::string& store_path);

}  // namespace ts
