// The node name taken from a kubelet client certificate's CN: certificates made here with
// OpenSSL, as a kubelet's credential holds them (inline, or a file with the key before it).
#include "shimkeeper/kube/certificate_identity.hpp"
#include "support/temp_dir_test.hpp"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <fstream>
#include <gtest/gtest.h>
#include <memory>
#include <string>

using shimkeeper::kube::node_name_of_certificate;
using shimkeeper::kube::PemSource;

namespace {

// PEM text of a self-signed certificate with subject O=system:nodes, CN=<cn>; with_key puts
// the private key first, as a kubelet's rotated kubelet-client-current.pem does.
std::string certificate_pem(const std::string& cn, bool with_key = false) {
    std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
    std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
    X509_set_version(cert.get(), 2);
    ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), 0);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), 3600);
    X509_set_pubkey(cert.get(), key.get());
    X509_NAME* name = X509_get_subject_name(cert.get());
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>("system:nodes"), -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_UTF8,
                               reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
    X509_set_issuer_name(cert.get(), name);
    X509_sign(cert.get(), key.get(), EVP_sha256());
    std::unique_ptr<BIO, decltype(&BIO_free)> out(BIO_new(BIO_s_mem()), BIO_free);
    if (with_key) {
        PEM_write_bio_PrivateKey(out.get(), key.get(), nullptr, nullptr, 0, nullptr, nullptr);
    }
    PEM_write_bio_X509(out.get(), cert.get());
    char* data = nullptr;
    long size = BIO_get_mem_data(out.get(), &data);
    return std::string(data, static_cast<std::size_t>(size));
}

PemSource inline_pem(std::string pem) {
    return PemSource{std::move(pem), {}};
}

} // namespace

TEST(CertificateIdentity, NodeCertificateNamesItsNode) {
    EXPECT_EQ(node_name_of_certificate(inline_pem(certificate_pem("system:node:worker-1"))),
              "worker-1");
}

TEST(CertificateIdentity, OtherIdentitiesNameNoNode) {
    EXPECT_EQ(node_name_of_certificate(inline_pem(certificate_pem("shimkeeper-agent"))),
              std::nullopt);
    EXPECT_EQ(node_name_of_certificate(inline_pem(certificate_pem("system:node:"))), std::nullopt);
    // Not a name the API server registers: never used to address a Node.
    EXPECT_EQ(node_name_of_certificate(inline_pem(certificate_pem("system:node:Bad_Name/x"))),
              std::nullopt);
}

TEST(CertificateIdentity, NoCertificateNamesNoNode) {
    EXPECT_EQ(node_name_of_certificate(PemSource{}), std::nullopt);
    EXPECT_EQ(node_name_of_certificate(inline_pem("-----BEGIN CERTIFICATE-----\nAAAA\n")),
              std::nullopt);
}

class CertificateIdentityFile : public shimkeeper::testing::TempDirTest {};

TEST_F(CertificateIdentityFile, KeyAndCertificateInOneFile) {
    const auto file = m_dir / "kubelet-client-current.pem";
    std::ofstream(file) << certificate_pem("system:node:ip-10-0-0-7.ec2.internal", true);
    EXPECT_EQ(node_name_of_certificate(PemSource{"", file}), "ip-10-0-0-7.ec2.internal");
}

TEST_F(CertificateIdentityFile, MissingFileNamesNoNode) {
    EXPECT_EQ(node_name_of_certificate(PemSource{"", m_dir / "gone.pem"}), std::nullopt);
}
