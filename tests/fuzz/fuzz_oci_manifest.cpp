// Fuzzes what shimkeeper reads from a registry before trusting it: the manifest/index parser
// and the platform choice (byte 0 picks the Content-Type and the node's architecture), and,
// on the same bytes, OCI references and WWW-Authenticate challenges. A parser may refuse;
// what it accepts must be usable: descriptors with normalised digests, a chosen platform that
// matches, a reference that parses again to itself.
#include "shimkeeper/fetch/oci/challenge.hpp"
#include "shimkeeper/fetch/oci/manifest.hpp"
#include "shimkeeper/fetch/oci/platform.hpp"
#include "shimkeeper/spec/oci_reference.hpp"

#include "fuzz_check.hpp"
#include <array>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace oci = shimkeeper::fetch::oci;
namespace spec = shimkeeper::spec;

namespace {

void check(bool ok, const char* what) {
    fuzz_check(ok, "fuzz_oci_manifest", what);
}

void check_descriptor(const oci::Descriptor& descriptor) {
    check(spec::normalise_digest(descriptor.digest) == descriptor.digest,
          "an accepted descriptor's digest is not normalised");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    static constexpr std::array<std::string_view, 5> k_types = {
        oci::media::oci_index, oci::media::oci_manifest, oci::media::docker_list,
        oci::media::docker_manifest, ""};
    const std::string_view type = k_types[data[0] % k_types.size()];
    const std::string arch = (data[0] & 0x80) != 0 ? "arm64" : "amd64";
    std::string_view bytes(reinterpret_cast<const char*>(data + 1), size - 1);

    auto document = oci::parse_manifest(bytes, type, "fuzz");
    if (document) {
        if (const auto* index = std::get_if<oci::Index>(&*document)) {
            for (const auto& entry : index->manifests) {
                check_descriptor(entry);
            }
            if (auto chosen = oci::select_platform(*index, arch, "fuzz")) {
                check(chosen->platform && chosen->platform->os == "linux",
                      "chose an entry that is not linux");
                check_descriptor(*chosen);
            }
        } else {
            const auto& manifest = std::get<oci::Manifest>(*document);
            check_descriptor(manifest.config);
            for (const auto& layer : manifest.layers) {
                check_descriptor(layer);
            }
        }
    }
    if (auto reference = spec::parse_oci_reference(bytes)) {
        auto again = spec::parse_oci_reference(reference->to_string());
        check(again && again->to_string() == reference->to_string(),
              "a reference does not round-trip");
    }
    if (auto challenge = oci::parse_challenge(bytes)) {
        check(!challenge->scheme.empty(), "a challenge without scheme");
    }
    return 0;
}
