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

}  // namespace ts
