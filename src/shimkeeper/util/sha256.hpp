// Streaming SHA-256 (OpenSSL EVP), so that a download is hashed in the same pass that writes it.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <filesystem>
#include <memory>
#include <string>
#include <string_view>

namespace shimkeeper::util {

class Sha256 {
public:
    Sha256();
    Sha256(Sha256&&) noexcept;
    Sha256& operator=(Sha256&&) noexcept;
    ~Sha256();

    void update(std::string_view data);
    // Lowercase hex of the digest; the object must not be updated afterwards.
    std::string finish_hex();
    // The digest of what was fed so far; updating may go on afterwards.
    std::string peek_hex() const;

private:
    struct Impl;
    std::unique_ptr<Impl> m_impl;
};

Expected<std::string> sha256_file_hex(const std::filesystem::path& path);

std::string sha256_hex(std::string_view data); // lowercase hex of the digest of `data`

bool is_sha256_hex(std::string_view text); // 64 lowercase or uppercase hex digits

} // namespace shimkeeper::util
