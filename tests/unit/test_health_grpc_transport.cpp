// The libcurl gRPC transport against hostile unix-socket servers: nothing listening, a server
// that hangs up, one that never answers, one that speaks HTTP/1. Each error must name the
// socket and the method, and no call may outlive its timeout. (The good path runs against a
// real containerd in tests/integration/health_containerd.sh.)
#include "shimkeeper/health/grpc_unix_client.hpp"
#include "shimkeeper/util/fd.hpp"
#include "shimkeeper/util/fs.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <thread>
#include <unistd.h>

namespace {
namespace health_grpc_transport {

using namespace shimkeeper;
using namespace std::chrono;

constexpr const char* k_method = "/containerd.services.version.v1.Version/Version";

// A unix socket server that accepts one connection and hands it to `behaviour`.
class OneShotServer {
public:
    OneShotServer(const std::filesystem::path& path, std::function<void(int)> behaviour) {
        m_listen = util::Fd(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
        sockaddr_un address{};
        address.sun_family = AF_UNIX;
        std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
        EXPECT_EQ(::bind(m_listen.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)),
                  0);
        EXPECT_EQ(::listen(m_listen.get(), 4), 0);
        m_thread = std::thread([this, behaviour = std::move(behaviour)] {
            util::Fd connection(::accept4(m_listen.get(), nullptr, nullptr, SOCK_CLOEXEC));
            if (connection) {
                behaviour(connection.get());
            }
        });
    }
    ~OneShotServer() {
        ::shutdown(m_listen.get(), SHUT_RDWR); // unblocks accept if no client came
        m_thread.join();
    }

private:
    util::Fd m_listen;
    std::thread m_thread;
};

class GrpcTransport : public ::testing::Test {
protected:
    void SetUp() override {
        auto dir = util::make_temp_dir(std::filesystem::temp_directory_path(), "sk-grpc-");
        ASSERT_TRUE(dir) << dir.error().message();
        m_dir = *dir;
        m_socket = m_dir / "containerd.sock";
    }
    void TearDown() override {
        if (!HasFailure()) {
            (void)util::remove_all(m_dir);
        }
    }
    void expect_error_names_socket(const util::Expected<std::string>& result) {
        ASSERT_FALSE(result);
        EXPECT_NE(result.error().message().find(m_socket.string()), std::string::npos)
            << result.error().message();
        EXPECT_NE(result.error().message().find(k_method), std::string::npos)
            << result.error().message();
    }

    std::filesystem::path m_dir;
    std::filesystem::path m_socket;
};

TEST_F(GrpcTransport, NothingListening) {
    health::GrpcUnixClient client(m_socket.string());
    const auto result = client.call(k_method, "", milliseconds{2'000}, health::Idempotent::yes);
    expect_error_names_socket(result);
    EXPECT_EQ(result.error().code(), util::ErrorCode::network);
    EXPECT_NE(result.error().message().find("is containerd running"), std::string::npos);
}

TEST_F(GrpcTransport, ServerHangsUp) {
    OneShotServer server(m_socket, [](int) {});
    health::GrpcUnixClient client(m_socket.string());
    const auto result = client.call(k_method, "", milliseconds{2'000}, health::Idempotent::yes);
    expect_error_names_socket(result);
}

TEST_F(GrpcTransport, ServerNeverAnswersCallEndsAtItsTimeout) {
    int done[2];
    ASSERT_EQ(::pipe2(done, O_CLOEXEC), 0);
    util::Fd done_read(done[0]);
    util::Fd done_write(done[1]);
    OneShotServer server(m_socket, [&](int) {
        char byte = 0;
        (void)::read(done_read.get(), &byte, 1); // holds the connection open, silent
    });
    health::GrpcUnixClient client(m_socket.string());
    const auto start = steady_clock::now();
    const auto result = client.call(k_method, "", milliseconds{300}, health::Idempotent::yes);
    const auto took = steady_clock::now() - start;
    done_write.reset();
    expect_error_names_socket(result);
    EXPECT_EQ(result.error().code(), util::ErrorCode::network);
    EXPECT_GE(took, milliseconds{250});
    EXPECT_LT(took, milliseconds{3'000});
}

TEST_F(GrpcTransport, ServerSpeaksHttp1) {
    OneShotServer server(m_socket, [](int fd) {
        char buffer[4096];
        (void)::read(fd, buffer, sizeof(buffer));
        const char reply[] = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";
        (void)::write(fd, reply, sizeof(reply) - 1);
    });
    health::GrpcUnixClient client(m_socket.string());
    const auto result = client.call(k_method, "", milliseconds{2'000}, health::Idempotent::yes);
    expect_error_names_socket(result);
}

} // namespace health_grpc_transport
} // namespace
