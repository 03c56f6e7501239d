#include "core/atomic_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace ts {
namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& path, const char* what, int err) {
    throw std::runtime_error(fmt::format("cannot write '{}': {}: {}", path, what, std::strerror(err)));
}

// write() may take less than asked (a signal, a pipe); EINTR is retried.
void writeAll(int fd, std::string_view content, const std::string& path) {
    while (!content.empty()) {
        const ssize_t n = ::write(fd, content.data(), content.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) fail(path, "write", n < 0 ? errno : EIO);
        content.remove_prefix(static_cast<size_t>(n));
    }
}

void writeInPlace(const std::string& path, std::string_view content) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) fail(path, "open", errno);
    try {
        writeAll(fd, content, path);
    } catch (...) {
        ::close(fd);
        throw;
    }
    if (::close(fd) != 0) fail(path, "close", errno);
}

// A new file's mode as open(…, 0666) would give it: mkstemp makes 0600.
mode_t defaultMode() {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    return 0666 & ~mask;
}

}  // namespace

void writeFileAtomically(const std::string& path, std::string_view content) {
    std::error_code ec;
    // Through a symbolic link, the file it points at is the one replaced.
    const fs::path resolved = fs::canonical(path, ec);  // fails when there is no file yet
    const fs::path target = ec ? fs::path(path) : resolved;
    struct stat st {};
    const bool exists = ::stat(target.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode)) fail(path, "it is a directory", EISDIR);
    if (exists && !S_ISREG(st.st_mode)) return writeInPlace(path, content);

    const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
    std::string temp = (dir / ("." + target.filename().string() + ".XXXXXX")).string();
    const int fd = ::mkstemp(temp.data());
    if (fd < 0) fail(path, "creating a temporary file beside it", errno);
    try {
        if (::fchmod(fd, exists ? (st.st_mode & 07777) : defaultMode()) != 0) fail(path, "chmod", errno);
        writeAll(fd, content, path);
        if (::fsync(fd) != 0) fail(path, "fsync", errno);
    } catch (...) {
        ::close(fd);
        ::unlink(temp.c_str());
        throw;
    }
    if (::close(fd) != 0) {
        const int err = errno;
        ::unlink(temp.c_str());
        fail(path, "close", err);
    }
    if (::rename(temp.c_str(), target.c_str()) != 0) {
        const int err = errno;
        ::unlink(temp.c_str());
        fail(path, "rename", err);
    }
}

bool sameFile(const std::string& a, const std::string& b) {
    std::error_code ec;
    return fs::equivalent(a, b, ec) && !ec;
}

}  // namespace ts
