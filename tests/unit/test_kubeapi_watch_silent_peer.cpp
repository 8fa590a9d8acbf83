// A watch against a peer that takes the request and never answers (not even a status line), over
// TLS from the real artifact server: the watch gives the request up after header_wait, says why,
// and its next request is answered. Without the bound the watch would wait for the stream's whole
// transfer timeout (2 x min_timeout + 30 s). (That the next request opens a fresh connection
// matters over HTTP/2; this server speaks HTTP/1.1, whose abandoned connection closes anyway.)
#include "shimkeeper/kubeapi/watch.hpp"
#include "test_fetch_server.hpp"

#include <gtest/gtest.h>

namespace shimkeeper::kubeapi {
namespace {
namespace kubeapi_watch_silent_peer {

using namespace std::chrono_literals;
using fetch::testing::ArtifactServer;
using fetch::testing::make_self_signed_cert;
using fetch::testing::TempDir;
using fetch::testing::write_file;

TEST(KubeWatchSilentPeer, AnUnansweredWatchIsGivenUpAndAskedAgain) {
    TempDir tmp;
    auto www = tmp.path() / "www";
    // What the second request gets: one event, as a watch stream carries it.
    write_file(www / "api/v1/nodes", R"({"type":"ADDED","object":{"apiVersion":"v1","kind":"Node",)"
                                     R"("metadata":{"name":"n1","resourceVersion":"6"}}})"
                                     "\n");
    auto cert = make_self_signed_cert(tmp.path());
    ArtifactServer server(www, tmp.path(), cert);

    KubeConfig config;
    config.server = server.url("/silent/1"); // the first request for each path gets no answer
    config.certificate_authority.file = cert.cert;
    Connection connection(config);
    auto loop = CurlEventLoop::create();
    ASSERT_TRUE(loop) << loop.error().message();

    WatchSettings settings;
    settings.resume_from = "5"; // the first request is the stream, not a list
    settings.header_wait = 1s;
    settings.backoff_initial = 50ms;
    std::vector<std::string> added;
    Watch watch(connection, **loop, nodes_resource(), "", settings, [&](const WatchEvent& event) {
        if (event.kind == WatchEvent::Kind::added) {
            added.push_back(event.object["metadata"]["name"].get<std::string>());
        }
    });
    ASSERT_TRUE(watch.start());
    auto started = std::chrono::steady_clock::now();
    while (added.empty() && std::chrono::steady_clock::now() - started < 20s) {
        ASSERT_TRUE((*loop)->run_once(200ms));
    }
    auto waited = std::chrono::steady_clock::now() - started;

    ASSERT_EQ(added, std::vector<std::string>{"n1"}) << watch.state().last_problem();
    EXPECT_GE(waited, 1s); // the silent request was given its header_wait
    EXPECT_LT(waited, 10s);
    EXPECT_EQ(watch.state().last_problem(),
              "no response to the request within 1000 ms (the connection is not reused)");
    EXPECT_EQ(watch.state().failures(), 0u); // the answered stream counted as a success
    EXPECT_EQ(watch.state().resource_version(), "6");
    // The silent one, then the answered one; the stream served as a file ends at once, so the
    // watch may have sent its next request before the loop stopped (seen under load).
    EXPECT_GE(server.requests_for("/silent/1/api/v1/nodes"), 2);
}

} // namespace kubeapi_watch_silent_peer
} // namespace
} // namespace shimkeeper::kubeapi
