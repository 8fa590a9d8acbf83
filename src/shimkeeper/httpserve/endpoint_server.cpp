#include "shimkeeper/httpserve/endpoint_server.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <httplib.h>
#include <sys/socket.h>
#include <thread>

namespace shimkeeper::httpserve {

struct EndpointServer::Impl {
    httplib::Server server;
    std::thread thread;
    std::atomic<bool> ended = false; // listen_after_bind returned
    int port = 0;
};

EndpointServer::EndpointServer(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}

EndpointServer::~EndpointServer() {
    // stop() does nothing before the thread's listen loop has begun, which would then never end:
    // wait for it to run (or to have failed) first.
    while (!m_impl->ended.load()) {
        if (m_impl->server.is_running()) {
            m_impl->server.stop();
            break;
        }
        std::this_thread::yield();
    }
    if (m_impl->thread.joinable()) {
        m_impl->thread.join();
    }
}

int EndpointServer::port() const {
    return m_impl->port;
}

util::Expected<std::unique_ptr<EndpointServer>> EndpointServer::start(const ListenAddress& address,
                                                                      Routes routes) {
    auto impl = std::make_unique<Impl>();
    httplib::Server& server = impl->server;
    // Two probe requests at a time are plenty; the library's default is a thread per core or 8.
    server.new_task_queue = [] {
        return new httplib::ThreadPool(2);
    };
    // SO_REUSEADDR only: the library's default adds SO_REUSEPORT, with which a second process
    // would share the port silently instead of being refused.
    server.set_socket_options([](socket_t socket) {
        int yes = 1;
        ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    });
    for (auto& [path, route] : routes) {
        server.Get(
            path, [route = std::move(route)](const httplib::Request&, httplib::Response& response) {
                Reply reply = route();
                response.status = reply.status;
                response.set_content(reply.body, reply.content_type.c_str());
            });
    }
    errno = 0;
    if (!server.bind_to_port(address.host, address.port)) {
        const std::string host =
            address.host.find(':') != std::string::npos ? "[" + address.host + "]" : address.host;
        return util::fail(util::ErrorCode::invalid_input,
                          "cannot listen on " + host + ":" + std::to_string(address.port) +
                              (errno != 0 ? std::string(": ") + std::strerror(errno) : ""));
    }
    impl->port = address.port;
    impl->thread = std::thread([raw = impl.get()] {
        raw->server.listen_after_bind();
        raw->ended = true;
    });
    return std::unique_ptr<EndpointServer>(new EndpointServer(std::move(impl)));
}

} // namespace shimkeeper::httpserve
