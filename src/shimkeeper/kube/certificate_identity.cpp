#include "shimkeeper/kube/certificate_identity.hpp"

#include "shimkeeper/spec/grammar.hpp"
#include "shimkeeper/util/fs.hpp"

#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <string_view>

namespace shimkeeper::kube {

namespace {

constexpr std::string_view k_node_prefix = "system:node:";

struct BioFree {
    void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Free {
    void operator()(X509* cert) const { X509_free(cert); }
};

std::optional<std::string> common_name(X509* cert) {
    X509_NAME* subject = X509_get_subject_name(cert);
    int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
    if (index < 0) {
        return std::nullopt;
    }
    ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
    unsigned char* utf8 = nullptr;
    int length = ASN1_STRING_to_UTF8(&utf8, data);
    if (length < 0) {
        return std::nullopt;
    }
    std::string name(reinterpret_cast<char*>(utf8), static_cast<std::size_t>(length));
    OPENSSL_free(utf8);
    return name;
}

} // namespace

std::optional<std::string> node_name_of_certificate(const PemSource& certificate) {
    std::string pem = certificate.pem;
    if (pem.empty() && !certificate.file.empty()) {
        auto read = util::read_file(certificate.file);
        if (!read) {
            return std::nullopt;
        }
        pem = std::move(*read);
    }
    if (pem.empty()) {
        return std::nullopt;
    }
    // A kubelet's rotated credential keeps key and certificate in one file; PEM_read_bio_X509
    // skips blocks that are not a certificate.
    std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
    std::unique_ptr<X509, X509Free> cert(
        bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr);
    if (!cert) {
        return std::nullopt;
    }
    auto cn = common_name(cert.get());
    if (!cn || !cn->starts_with(k_node_prefix)) {
        return std::nullopt;
    }
    std::string name = cn->substr(k_node_prefix.size());
    if (!spec::is_valid_node_name(name)) {
        return std::nullopt; // not a name the API server could have registered
    }
    return name;
}

} // namespace shimkeeper::kube
