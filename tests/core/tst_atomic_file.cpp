// writeFileAtomically: the old file survives every failure; the new one appears whole.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "core/atomic_file.h"

namespace fs = std::filesystem;

namespace {

class AtomicFileTest : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               fs::path("ts-atomic-" + std::to_string(::getpid()) + "-" +
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const char* name) const { return (dir_ / name).string(); }
    static std::string read(const std::string& p) {
        std::ifstream in(p);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }
    static void write(const std::string& p, const std::string& text) { std::ofstream(p) << text; }
    size_t entries() const {
        return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), {}));
    }
    fs::path dir_;
};

TEST_F(AtomicFileTest, WritesANewFileAndReplacesAnOldOne) {
    const std::string p = path("report.md");
    ts::writeFileAtomically(p, "first\n");
    EXPECT_EQ(read(p), "first\n");
    ts::writeFileAtomically(p, "second\n");
    EXPECT_EQ(read(p), "second\n");
    EXPECT_EQ(entries(), 1u) << "no temporary file left beside it";
}

TEST_F(AtomicFileTest, FailureLeavesTheOldFileAndNoTemporary) {
    const std::string p = path("keep.md");
    write(p, "notes\n");
    EXPECT_THROW(ts::writeFileAtomically(path("no/such/dir/x.md"), "x"), std::runtime_error);
    EXPECT_THROW(ts::writeFileAtomically(dir_.string(), "x"), std::runtime_error);  // a directory
    EXPECT_EQ(read(p), "notes\n");
    EXPECT_EQ(entries(), 1u);
}

TEST_F(AtomicFileTest, ErrorsNameThePathAndTheReason) {
    const std::string bad = path("no/such/dir/x.md");
    try {
        ts::writeFileAtomically(bad, "x");
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find(bad), std::string::npos) << msg;
        EXPECT_NE(msg.find("No such file or directory"), std::string::npos) << msg;
    }
}

TEST_F(AtomicFileTest, AFullDeviceIsAnError) {
    if (!fs::exists("/dev/full")) GTEST_SKIP() << "no /dev/full";
    EXPECT_THROW(ts::writeFileAtomically("/dev/full", "some text\n"), std::runtime_error);
    EXPECT_TRUE(fs::is_character_file("/dev/full")) << "the device node is still there";
}

TEST_F(AtomicFileTest, KeepsTheModeAndWritesThroughALink) {
    const std::string p = path("shared.csv");
    write(p, "old\n");
    fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
    const std::string link = path("link.csv");
    fs::create_symlink(p, link);
    ts::writeFileAtomically(link, "new\n");
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(read(p), "new\n");
    EXPECT_EQ(fs::status(p).permissions() & fs::perms::all,
              fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
}

TEST_F(AtomicFileTest, SameFileSeesThroughLinksAndDots) {
    const std::string p = path("a.db");
    write(p, "");
    fs::create_symlink(p, path("b.db"));
    EXPECT_TRUE(ts::sameFile(p, path("b.db")));
    EXPECT_TRUE(ts::sameFile(p, (dir_ / "." / "a.db").string()));
    EXPECT_FALSE(ts::sameFile(p, path("missing.db")));
}

// A disk that fills up half-way through the temporary file (here a file-size limit: write()
// fails with EFBIG): an error naming the path, the old file intact, no temporary left.
TEST_F(AtomicFileTest, AFullDiskMidWayLeavesTheOldFile) {
    const std::string p = path("big.csv");
    write(p, "old\n");
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {  // the limit applies to this process alone
        std::signal(SIGXFSZ, SIG_IGN);
        const rlimit limit{4096, 4096};
        if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) ::_exit(20);
        try {
            ts::writeFileAtomically(p, std::string(1 << 20, 'x'));
            ::_exit(21);
        } catch (const std::runtime_error& e) {
            ::_exit(std::string(e.what()).find(p) != std::string::npos ? 0 : 22);
        }
    }
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "21: no error, 22: the error does not name the path";
    EXPECT_EQ(read(p), "old\n");
    EXPECT_EQ(entries(), 1u) << "no temporary file left beside it";
}

}  // namespace
