// Fuzzes the Shim object parser (cluster/model/shim_object) with any bytes as the JSON of a Shim,
// as a watch or a list delivers it from an API server the node does not trust to run our CRD.
// Bit 0 of byte 0 picks the node's architecture. The parser must refuse with an error naming the
// object ("Shim/..."), or give a spec holding what the transaction relies on: a valid name and
// handler, a runtime type and binary inside their grammars (derived ones agreeing with the
// binary's name), one source, a sha256 unless allowUnverified, and the same identity that the
// coordinator reads.
#include "shimkeeper/cluster/model/shim_object.hpp"
#include "shimkeeper/spec/grammar.hpp"
#include "shimkeeper/spec/oci_reference.hpp"
#include "shimkeeper/util/sha256.hpp"

#include "fuzz_check.hpp"

#include <cstdint>
#include <string>

namespace model = shimkeeper::cluster::model;
namespace spec = shimkeeper::spec;

namespace {

void check(bool ok, const char* what) {
    fuzz_check(ok, "fuzz_shim_object", what);
}

void check_spec(const spec::ShimSpec& shim, const nlohmann::json& object) {
    check(spec::is_valid_name(shim.name), "a shim name outside its grammar was accepted");
    check(spec::is_valid_name(shim.handler), "a handler outside its grammar was accepted");
    check(!spec::runtime_type_problem(shim.runtime_type), "a bad runtime type was accepted");
    check(!spec::binary_problem(shim.binary), "a bad binary name was accepted");
    if (shim.runtime_type_from_artifact) {
        check(shim.binary == spec::default_binary_for(shim.runtime_type),
              "the handler's guess names another binary than its runtime type");
    } else if (!shim.runtime_type_derivation.empty()) {
        check(spec::runtime_type_said_by_binary(shim.binary) == shim.runtime_type,
              "a runtime type derived from the binary disagrees with its name");
    }
    check(shim.fetch.url.empty() != shim.fetch.oci.empty(), "not exactly one source");
    if (shim.fetch.sha256) {
        check(shimkeeper::util::is_sha256_hex(*shim.fetch.sha256), "a bad sha256 accepted");
    }
    if (!shim.allow_unverified) {
        const auto reference = spec::parse_oci_reference(shim.fetch.oci);
        check(shim.fetch.sha256 || (reference && reference->digest),
              "an unverified source without allowUnverified");
    }
    auto identity = model::shim_identity_of(object);
    check(identity.has_value(), "the coordinator refuses what a node accepts");
    check(identity->handler == shim.handler, "node and coordinator disagree on the handler");
    check(!shim.runtime_class || shim.runtime_class->name == identity->runtime_class,
          "node and coordinator disagree on the RuntimeClass");
    const nlohmann::json fields = model::spec_status_fields(object);
    check(fields.value("handler", std::string()) == shim.handler,
          "the status names another handler");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    if (size == 0) {
        return 0;
    }
    const std::string arch = (data[0] & 1) != 0 ? "arm64" : "amd64";
    const auto object = nlohmann::json::parse(data + 1, data + size, nullptr, false);
    if (object.is_discarded() || !object.is_object()) {
        return 0;
    }
    auto shim = model::shim_spec_of(object, arch);
    if (!shim) {
        check(shim.error().message().starts_with("Shim/"), "an error does not name the object");
        return 0;
    }
    check_spec(*shim, object);
    return 0;
}
