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
    throw std::runtime_error(
        fmt::format("cannot write '{}': {}: {}", path, what, std::strerror(err)));
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
        if (::fchmod(fd, exists ? (st.st_mode & 07777) : defaultMode()) != 0)
            fail(path, "chmod", errno);
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

namespace {

// The first bytes of `path` (fewer when it is shorter or cannot be read). Only regular files
// are read: a FIFO would block.
std::string fileStart(const std::string& path, size_t n) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return {};
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) return {};
    std::string buf(n, '\0');
    const ssize_t got = ::read(fd, buf.data(), n);
    ::close(fd);
    buf.resize(got > 0 ? static_cast<size_t>(got) : 0);
    return buf;
}

}  // namespace

std::string outputTargetProblem(const std::string& path, const std::string& store_path) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) return fmt::format("'{}' is a directory", path);
    // The same file, or (for journal files that come and go with SQLite's connections) the
    // same path once links and ".." are resolved.
    const fs::path target = fs::weakly_canonical(path, ec);
    const bool resolved = !ec;
    if (!store_path.empty())
        for (const char* suffix : {"", "-wal", "-shm", "-journal"})
            if (sameFile(path, store_path + suffix) ||
                (resolved && fs::weakly_canonical(store_path + suffix, ec) == target && !ec))
                return fmt::format("'{}' is the results store {} itself; choose another file", path,
                                   store_path + suffix);
    const std::string head = fileStart(path, 16);
    if (head == std::string_view("SQLite format 3\0", 16))
        return fmt::format(
            "'{}' is an SQLite database (a results store?); writing there would destroy it, so "
            "choose another file",
            path);
    // A write-ahead log's magic number, big-endian 0x377f0682 or 0x377f0683.
    if (head.size() >= 4 && head.compare(0, 3, "\x37\x7f\x06") == 0 &&
        (head[3] == '\x82' || head[3] == '\x83'))
        return fmt::format(
            "'{}' is an SQLite write-ahead log (part of a results store); choose another file",
            path);
    return {};
}

}  // namespace ts
