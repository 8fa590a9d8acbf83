// Test helpers for the downloader tests: a temp folder kept when a test fails, and the real
// artifact server (tests/support/artifact_server.py) started on 127.0.0.1 for one test.
#pragma once

#include "unit/child_process.hpp"
#include "unit/source_dir.hpp"

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <curl/curl.h>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace shimkeeper::fetch::testing {

namespace fs = std::filesystem;

inline fs::path source_dir() {
    return shimkeeper::testing::source_dir();
}

// One folder per test under $TMPDIR; removed after a passing test, kept (and named) otherwise.
class TempDir {
public:
    TempDir() {
        std::string pattern = (fs::temp_directory_path() / "sk-fetch-test.XXXXXX").string();
        if (::mkdtemp(pattern.data()) == nullptr) {
            throw std::runtime_error("mkdtemp failed");
        }
        m_path = pattern;
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        if (::testing::Test::HasFailure()) {
            std::fprintf(stderr, "test files kept in %s\n", m_path.c_str());
        } else {
            std::error_code ec;
            fs::remove_all(m_path, ec);
        }
    }
    const fs::path& path() const { return m_path; }

private:
    fs::path m_path;
};

// EXPECT_TRUE(contains(message, "HTTP 404")) prints the whole message when it fails.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
    if (text.find(part) != std::string::npos) {
        return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << "\"" << part << "\" not found in: " << text;
}

inline void write_file(const fs::path& path, const std::string& content) {
    fs::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary) << content;
}

// Pseudo-random bytes (deterministic per seed, so failures reproduce).
inline std::string random_bytes(size_t size, unsigned seed = 1) {
    std::string data(size, '\0');
    unsigned state = seed;
    for (char& c : data) {
        state = state * 1103515245u + 12345u;
        c = static_cast<char>(state >> 16);
    }
    return data;
}

inline std::vector<std::string> entries_of(const fs::path& dir) {
    std::vector<std::string> names;
    for (const auto& entry : fs::directory_iterator(dir)) {
        names.push_back(entry.path().filename().string());
    }
    return names;
}

struct TlsFiles {
    fs::path cert;
    fs::path key;
};

// A self-signed certificate for 127.0.0.1 made with the openssl CLI (it is its own CA bundle).
inline TlsFiles make_self_signed_cert(const fs::path& dir) {
    TlsFiles files{dir / "cert.pem", dir / "key.pem"};
    std::string command = "openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=127.0.0.1"
                          " -addext subjectAltName=IP:127.0.0.1 -keyout '" +
                          files.key.string() + "' -out '" + files.cert.string() +
                          "' >/dev/null 2>&1";
    if (std::system(command.c_str()) != 0) {
        throw std::runtime_error("openssl could not make a test certificate");
    }
    return files;
}

class ArtifactServer {
public:
    ArtifactServer(const fs::path& dir, const fs::path& work,
                   const std::optional<TlsFiles>& tls = std::nullopt)
        : m_tls(tls.has_value()) {
        fs::path port_file = work / ("server-" + std::to_string(::getpid()) + "-" +
                                     std::to_string(reinterpret_cast<std::uintptr_t>(this)));
        std::vector<std::string> args = {
            "python3",     (source_dir() / "tests/support/artifact_server.py").string(),
            "--dir",       dir.string(),
            "--port-file", port_file.string()};
        if (tls) {
            args.insert(args.end(),
                        {"--tls-cert", tls->cert.string(), "--tls-key", tls->key.string()});
        }
        m_pid = ::fork();
        if (m_pid == 0) {
            ::prctl(PR_SET_PDEATHSIG, SIGTERM); // never outlive a crashed test
            std::vector<char*> argv;
            for (auto& arg : args) {
                argv.push_back(arg.data());
            }
            argv.push_back(nullptr);
            ::execvp(argv[0], argv.data());
            ::_exit(127);
        }
        auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (!fs::exists(port_file)) {
            if (std::chrono::steady_clock::now() > deadline) {
                throw std::runtime_error("artifact_server.py did not start within 10 s");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        std::ifstream(port_file) >> m_port;
    }
    ArtifactServer(const ArtifactServer&) = delete;
    ArtifactServer& operator=(const ArtifactServer&) = delete;
    ~ArtifactServer() { shimkeeper::testing::stop_child(m_pid, std::chrono::seconds(5)); }

    int port() const { return m_port; }
    std::string url(const std::string& path) const {
        return std::string(m_tls ? "https" : "http") + "://127.0.0.1:" + std::to_string(m_port) +
               path;
    }

    // How many requests the server answered for this URL path.
    int requests_for(const std::string& path) const {
        auto counts = nlohmann::json::parse(get("/_requests"));
        return counts["paths"].value(path, 0);
    }
    int total_requests() const { return nlohmann::json::parse(get("/_requests"))["total"]; }
    // Lets every download held by /hold/ go on.
    void release_held() const { (void)get("/_release"); }

private:
    std::string get(const std::string& path) const {
        std::string body;
        CURL* handle = curl_easy_init();
        curl_easy_setopt(handle, CURLOPT_URL, url(path).c_str());
        curl_easy_setopt(handle, CURLOPT_SSL_VERIFYPEER, 0L); // our own server, counting only
        curl_easy_setopt(handle, CURLOPT_SSL_VERIFYHOST, 0L);
        curl_easy_setopt(handle, CURLOPT_WRITEDATA, &body);
        curl_easy_setopt(
            handle, CURLOPT_WRITEFUNCTION, +[](char* data, size_t size, size_t count, void* user) {
                static_cast<std::string*>(user)->append(data, size * count);
                return size * count;
            });
        CURLcode rc = curl_easy_perform(handle);
        curl_easy_cleanup(handle);
        if (rc != CURLE_OK) {
            throw std::runtime_error(std::string("cannot query the server: ") +
                                     curl_easy_strerror(rc));
        }
        return body;
    }

    bool m_tls;
    pid_t m_pid = -1;
    int m_port = 0;
};

} // namespace shimkeeper::fetch::testing
