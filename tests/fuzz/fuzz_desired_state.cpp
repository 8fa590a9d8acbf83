// Fuzzes the desired-state loader with any text as one TOML file (a shims.d drop-in, or the
// agent config when bit 0 of byte 0 is set). The loader must refuse with an error naming the
// file, or give shims that hold what the rest of the program relies on: a valid name and
// handler, one source (a URL with a 64-hex sha256 or none, or an OCI reference that parses
// again to itself), and a normalised path.
#include "shimkeeper/spec/desired_state.hpp"
#include "shimkeeper/spec/oci_reference.hpp"
#include "shimkeeper/util/sha256.hpp"

#include "fuzz_check.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace spec = shimkeeper::spec;

namespace {

void check(bool ok, const char* what) {
    fuzz_check(ok, "fuzz_desired_state", what);
}

constexpr const char* k_file = "shims.d/fuzz.toml";

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const bool settings = (data[0] & 1) != 0;
    const char* arch = (data[0] & 2) != 0 ? "arm64" : "amd64";
    std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
    auto loaded = spec::parse_desired_state_text(text, k_file, arch, settings);
    if (!loaded) {
        check(loaded.error().message().starts_with(k_file), "an error does not name the file");
        return 0;
    }
    for (const spec::ShimSpec& shim : loaded->shims) {
        check(spec::is_valid_name(shim.name), "a shim name outside its grammar was accepted");
        check(!shim.handler.empty(), "a shim without handler was accepted");
        check(shim.fetch.url.empty() != shim.fetch.oci.empty(), "not exactly one source");
        if (shim.fetch.sha256) {
            check(shimkeeper::util::is_sha256_hex(*shim.fetch.sha256), "a bad sha256 accepted");
        }
        if (!shim.fetch.oci.empty()) {
            auto again = spec::parse_oci_reference(shim.fetch.oci);
            check(again && again->to_string() == shim.fetch.oci, "a reference does not round-trip");
            check(shim.fetch.path.empty() ||
                      spec::normalise_oci_path(shim.fetch.path) == shim.fetch.path,
                  "a path was not normalised");
        } else {
            check(shim.fetch.path.empty(), "a url source with a path");
        }
    }
    return 0;
}
