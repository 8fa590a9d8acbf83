// A few read-only HTTP endpoints (a Pod's probes, Prometheus' scrape) served from a thread of
// their own, so that a scrape never waits on the caller's loop nor the loop on a scrape. Each
// route is a function called on the server's threads: it must only read what its owner
// publishes under a lock or in atomics. GET and HEAD only; any other path is a 404.
// cpp-httplib (Debian's libcpp-httplib) does the HTTP; it stays inside endpoint_server.cpp.
#pragma once

#include "shimkeeper/httpserve/listen_address.hpp"
#include "shimkeeper/util/error.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>

namespace shimkeeper::httpserve {

struct Reply {
    int status = 200;
    std::string body;
    std::string content_type = "text/plain; charset=utf-8";
};

using Routes = std::map<std::string, std::function<Reply()>>; // by path

class EndpointServer {
public:
    // Binds at once (an address in use or not ours is an Error naming it), then serves on a
    // thread of its own until destroyed.
    static util::Expected<std::unique_ptr<EndpointServer>> start(const ListenAddress& address,
                                                                 Routes routes);
    ~EndpointServer();
    EndpointServer(const EndpointServer&) = delete;
    EndpointServer& operator=(const EndpointServer&) = delete;

    int port() const; // the bound port

private:
    struct Impl;
    explicit EndpointServer(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> m_impl;
};

} // namespace shimkeeper::httpserve
