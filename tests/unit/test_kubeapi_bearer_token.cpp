// When a tokenFile is read again: on any change of the file, at least once a minute even when
// its stat looks the same, and at once after a 401.
#include "shimkeeper/kubeapi/bearer_token.hpp"
#include "support/temp_dir_test.hpp"

#include <fcntl.h>
#include <fstream>
#include <gtest/gtest.h>
#include <sys/stat.h>

namespace fs = std::filesystem;

namespace {
namespace kubeapi_bearer_token {

using shimkeeper::kubeapi::BearerToken;
using shimkeeper::kubeapi::KubeConfig;

class TokenFile : public shimkeeper::testing::TempDirTest {
protected:
    // Rewrites the file in place, keeping its inode, size and mtime: a change stat cannot see.
    void rewrite_unseen(const std::string& token) {
        struct stat before {};
        ASSERT_EQ(::stat(file().c_str(), &before), 0);
        std::ofstream(file(), std::ios::in | std::ios::out) << token;
        const timespec times[2] = {before.st_atim, before.st_mtim};
        ASSERT_EQ(::utimensat(AT_FDCWD, file().c_str(), times, 0), 0);
    }
    fs::path file() const { return m_dir / "token"; }
    BearerToken token() {
        std::ofstream(file()) << "token-1\n";
        KubeConfig config;
        config.token_file = file();
        return BearerToken(config);
    }
};

using Clock = BearerToken::Clock;

TEST_F(TokenFile, AReplacedFileIsReadAtTheNextRequest) {
    BearerToken bearer = token();
    const auto start = Clock::now();
    EXPECT_EQ(bearer.current(start).value(), "token-1");
    std::ofstream(m_dir / "next") << "token-2\n";
    fs::rename(m_dir / "next", file()); // as the kubelet swaps a projected token
    EXPECT_EQ(bearer.current(start).value(), "token-2");
}

TEST_F(TokenFile, AnUnseenRewriteIsReadWithinAMinute) {
    BearerToken bearer = token();
    const auto start = Clock::now();
    EXPECT_EQ(bearer.current(start).value(), "token-1");
    rewrite_unseen("token-9");
    EXPECT_EQ(bearer.current(start + std::chrono::seconds(59)).value(), "token-1");
    EXPECT_EQ(bearer.current(start + BearerToken::k_reread_every).value(), "token-9");
}

TEST_F(TokenFile, ARefusalReadsTheFileAgainAtOnce) {
    BearerToken bearer = token();
    const auto start = Clock::now();
    EXPECT_EQ(bearer.current(start).value(), "token-1");
    EXPECT_FALSE(bearer.renew_after_refusal("token-1", start)) << "the same token: no retry";
    rewrite_unseen("token-9");
    EXPECT_TRUE(bearer.renew_after_refusal("token-1", start));
    EXPECT_EQ(bearer.current(start).value(), "token-9");
}

TEST(BearerTokenInline, ARefusalOfAnInlineTokenIsFinal) {
    KubeConfig config;
    config.token = "fixed";
    BearerToken bearer(config);
    EXPECT_EQ(bearer.current().value(), "fixed");
    EXPECT_FALSE(bearer.renew_after_refusal("fixed"));
}

} // namespace kubeapi_bearer_token
} // namespace
