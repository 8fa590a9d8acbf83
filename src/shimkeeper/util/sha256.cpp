#include "shimkeeper/util/sha256.hpp"

#include "shimkeeper/util/fd.hpp"

#include <cerrno>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdexcept>
#include <unistd.h>

namespace shimkeeper::util {

struct Sha256::Impl {
    struct MdCtxDeleter {
        void operator()(EVP_MD_CTX* context) const { EVP_MD_CTX_free(context); }
    };
    std::unique_ptr<EVP_MD_CTX, MdCtxDeleter> ctx{EVP_MD_CTX_new()};
};

Sha256::Sha256() : m_impl(std::make_unique<Impl>()) {
    // Allocation failure of a digest context is not something a user can act on: throw.
    if (!m_impl->ctx || EVP_DigestInit_ex(m_impl->ctx.get(), EVP_sha256(), nullptr) != 1) {
        throw std::runtime_error("OpenSSL: cannot initialise SHA-256");
    }
}
Sha256::Sha256(Sha256&&) noexcept = default;
Sha256& Sha256::operator=(Sha256&&) noexcept = default;
Sha256::~Sha256() = default;

void Sha256::update(std::string_view data) {
    EVP_DigestUpdate(m_impl->ctx.get(), data.data(), data.size());
}

std::string Sha256::peek_hex() const {
    Sha256 copy;
    if (EVP_MD_CTX_copy_ex(copy.m_impl->ctx.get(), m_impl->ctx.get()) != 1) {
        throw std::runtime_error("OpenSSL: cannot copy a SHA-256 context");
    }
    return copy.finish_hex();
}

std::string Sha256::finish_hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(m_impl->ctx.get(), digest, &length);
    static constexpr char k_hex[] = "0123456789abcdef";
    std::string hex;
    hex.reserve(length * 2);
    for (unsigned int i = 0; i < length; ++i) {
        hex.push_back(k_hex[digest[i] >> 4]);
        hex.push_back(k_hex[digest[i] & 0xf]);
    }
    return hex;
}

std::string sha256_hex(std::string_view data) {
    Sha256 hash;
    hash.update(data);
    return hash.finish_hex();
}

Expected<std::string> sha256_file_hex(const std::filesystem::path& path) {
    Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
        return std::unexpected(
            Error::from_errno(ErrorCode::io, "cannot read " + path.string(), errno));
    }
    Sha256 hash;
    char buffer[1 << 16];
    for (;;) {
        ssize_t n = ::read(fd.get(), buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            return std::unexpected(
                Error::from_errno(ErrorCode::io, "cannot read " + path.string(), errno));
        }
        if (n == 0) {
            return hash.finish_hex();
        }
        hash.update(std::string_view(buffer, static_cast<size_t>(n)));
    }
}

bool is_sha256_hex(std::string_view text) {
    if (text.size() != 64) {
        return false;
    }
    for (char c : text) {
        bool hex = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
        if (!hex) {
            return false;
        }
    }
    return true;
}

} // namespace shimkeeper::util
