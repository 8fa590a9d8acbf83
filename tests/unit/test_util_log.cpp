// The journal-or-lines decision and the field mapping, without a journal: the decision is a pure
// function of JOURNAL_STREAM and fstat(2) of stderr, and records reach a recording sink.
#include "shimkeeper/util/log.hpp"
#include "shimkeeper/util/log_sink.hpp"
#include "support/recording_log_sink.hpp"
#include "support/temp_dir_test.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

namespace shimkeeper::util {
namespace {
namespace util_log {

struct stat stat_of(dev_t device, ino_t inode) {
    struct stat st {};
    st.st_dev = device;
    st.st_ino = inode;
    return st;
}

TEST(LogTarget, JournalOnlyWhenJournalStreamNamesStderrItself) {
    const struct stat st = stat_of(25, 4711);
    EXPECT_EQ(log_target_for("25:4711", &st), LogTarget::journal);
    EXPECT_EQ(log_target_for(nullptr, &st), LogTarget::lines) << "no JOURNAL_STREAM: a terminal";
    EXPECT_EQ(log_target_for("25:4712", &st), LogTarget::lines)
        << "stderr redirected away from the journal stream (a wrapper, a pipe)";
    EXPECT_EQ(log_target_for("26:4711", &st), LogTarget::lines);
    EXPECT_EQ(log_target_for("25:4711", nullptr), LogTarget::lines) << "fd 2 closed";
}

TEST(LogTarget, MalformedJournalStreamMeansLines) {
    const struct stat st = stat_of(25, 4711);
    for (const char* value :
         {"", ":", "25", "25:", ":4711", "25:4711:1", "x:4711", "25:4711 ", "-25:4711"}) {
        EXPECT_EQ(log_target_for(value, &st), LogTarget::lines) << "'" << value << "'";
    }
}

class LogTargetOnDisk : public testing::TempDirTest {};

TEST_F(LogTargetOnDisk, AFileDescriptorMatchesItsOwnDeviceAndInodeOnly) {
    const int one = ::open((m_dir / "one").c_str(), O_CREAT | O_WRONLY, 0600);
    const int two = ::open((m_dir / "two").c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(one, 0);
    ASSERT_GE(two, 0);
    struct stat first {};
    struct stat second {};
    ASSERT_EQ(::fstat(one, &first), 0);
    ASSERT_EQ(::fstat(two, &second), 0);
    const std::string stream = std::to_string(first.st_dev) + ":" + std::to_string(first.st_ino);
    EXPECT_EQ(log_target_for(stream.c_str(), &first), LogTarget::journal);
    EXPECT_EQ(log_target_for(stream.c_str(), &second), LogTarget::lines);
    ::close(one);
    ::close(two);
}

TEST(JournalFields, CarryMessagePriorityIdentifierAndTheRecordsFields) {
    const LogRecord record{
        LogLevel::warning,
        "demo: install of handler demo rolled-back",
        {.shim = "demo", .handler = "demo-h", .digest = "sha256:abc", .txn = "20261124T0630-1"}};
    EXPECT_EQ(
        journal_fields(record),
        (std::vector<std::string>{"MESSAGE=demo: install of handler demo rolled-back", "PRIORITY=4",
                                  "SYSLOG_IDENTIFIER=shimkeeper", "SHIM=demo", "HANDLER=demo-h",
                                  "DIGEST=sha256:abc", "TXN=20261124T0630-1"}));
}

TEST(JournalFields, EmptyFieldsAreLeftOut) {
    const LogRecord record{LogLevel::info, "reconciled", {.txn = "t1"}};
    EXPECT_EQ(journal_fields(record),
              (std::vector<std::string>{"MESSAGE=reconciled", "PRIORITY=6",
                                        "SYSLOG_IDENTIFIER=shimkeeper", "TXN=t1"}));
}

TEST(JournalFields, PrioritiesAreSyslogLevels) {
    EXPECT_EQ(syslog_priority(LogLevel::error), 3);
    EXPECT_EQ(syslog_priority(LogLevel::warning), 4);
    EXPECT_EQ(syslog_priority(LogLevel::info), 6);
    EXPECT_EQ(syslog_priority(LogLevel::debug), 7);
}

TEST(ReadableLine, IsTheMessageWithItsLevelAndNoFields) {
    EXPECT_EQ(readable_line({LogLevel::error, "boom", {.shim = "demo"}}), "error: boom\n");
    EXPECT_EQ(readable_line({LogLevel::info, "fine", {}}), "fine\n");
    EXPECT_EQ(readable_line({LogLevel::warning, "hm", {}}), "warning: hm\n");
}

TEST(Log, ScopedFieldsJoinEachRecordAndACallsOwnFieldsWin) {
    auto sink = std::make_shared<testing::RecordingLogSink>();
    const Log log(LogLevel::info, sink);
    const Log txn = log.with({.txn = "t1"});
    const Log shim = txn.with({.shim = "demo", .handler = "demo"});
    shim.info("staged", {.digest = "sha256:aa"});
    shim.warning("renamed", {.handler = "other"});
    txn.error("rolling back");
    log.info("plain");
    ASSERT_EQ(sink->records.size(), 4u);
    EXPECT_EQ(sink->records[0].fields.txn, "t1");
    EXPECT_EQ(sink->records[0].fields.shim, "demo");
    EXPECT_EQ(sink->records[0].fields.digest, "sha256:aa");
    EXPECT_EQ(sink->records[1].fields.handler, "other");
    EXPECT_EQ(sink->records[2].fields.shim, "") << "the scope of a shim ends with its Log";
    EXPECT_EQ(sink->records[2].fields.txn, "t1");
    EXPECT_EQ(sink->records[3].fields.txn, "");
}

TEST(Log, RecordsBelowTheLevelNeverReachTheSink) {
    auto sink = std::make_shared<testing::RecordingLogSink>();
    const Log log(LogLevel::warning, sink);
    log.debug("d");
    log.info("i");
    log.warning("w");
    ASSERT_EQ(sink->records.size(), 1u);
    EXPECT_EQ(sink->records[0].message, "w");
}

} // namespace util_log
} // namespace
} // namespace shimkeeper::util
