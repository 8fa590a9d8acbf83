// Fuzzes the Shim object mapping (cluster/model/shim_object) with any bytes as the JSON of a Shim,
// as a watch or a list delivers it from an API server the node does not trust to run our CRD.
// Bit 0 of byte 0 picks the node's architecture; bit 1 how the fetch source is written back.
// The mapping must refuse with an error naming the object ("Shim/..."), or give a spec that
// round-trips: written as the [[shim]] of a shims.d file (spec/shim_toml), the node's own loader
// accepts it for the same architecture and reads back every field the mapping set. Besides, a
// derived runtime type agrees with the binary's name, and the coordinator reads the same
// identity.
#include "shimkeeper/cluster/model/shim_object.hpp"
#include "shimkeeper/spec/desired_state.hpp"
#include "shimkeeper/spec/grammar.hpp"
#include "shimkeeper/spec/shim_toml.hpp"

#include "fuzz_check.hpp"

#include <cstdint>
#include <string>

namespace model = shimkeeper::cluster::model;
namespace spec = shimkeeper::spec;

namespace {

void check(bool ok, const char* what, const std::string& where = "") {
    fuzz_check(ok, "fuzz_shim_object", what, where.c_str());
}

// The spec the loader reads back from the mapped spec's shims.d text, field by field.
void check_round_trip(const spec::ShimSpec& shim, const std::string& arch, spec::FetchForm form) {
    const std::string text = spec::shims_d_toml_of(shim, arch, form);
    const std::string file = "shims.d/" + shim.name + ".toml";
    auto loaded = spec::parse_desired_state_text(text, file, arch, false);
    if (!loaded) {
        check(false, "the loader refuses a spec the mapping accepted:",
              loaded.error().message() + "\n--- " + file + "\n" + text);
    }
    check(loaded->shims.size() == 1, "the loader read another number of shims", "\n" + text);
    const spec::ShimSpec& back = loaded->shims.front();
    const std::string shown = "\n--- " + file + "\n" + text;
    check(back.name == shim.name, "the loader reads another name", shown);
    check(back.handler == shim.handler, "the loader reads another handler", shown);
    check(back.runtime_type == shim.runtime_type, "the loader reads another runtime type", shown);
    check(back.binary == shim.binary, "the loader reads another binary", shown);
    check(back.version == shim.version, "the loader reads another version", shown);
    check(back.options == shim.options, "the loader reads other options", shown);
    check(back.allow_unverified == shim.allow_unverified,
          "the loader reads another allow_unverified", shown);
    check(back.adopt == shim.adopt, "the loader reads another adopt", shown);
    check(back.fetch.url == shim.fetch.url, "the loader reads another url", shown);
    check(back.fetch.sha256 == shim.fetch.sha256, "the loader reads another sha256", shown);
    check(back.fetch.oci == shim.fetch.oci, "the loader reads another OCI reference", shown);
    check(back.fetch.path == shim.fetch.path, "the loader reads another OCI path", shown);
    check(back.runtime_class.has_value() == shim.runtime_class.has_value() &&
              (!back.runtime_class || back.runtime_class->name == shim.runtime_class->name),
          "the loader reads another runtime_class", shown);
}

void check_spec(const spec::ShimSpec& shim, const nlohmann::json& object) {
    if (shim.runtime_type_from_artifact) {
        check(shim.binary == spec::default_binary_for(shim.runtime_type),
              "the handler's guess names another binary than its runtime type");
    } else if (!shim.runtime_type_derivation.empty()) {
        check(spec::runtime_type_said_by_binary(shim.binary) == shim.runtime_type,
              "a runtime type derived from the binary disagrees with its name");
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
    const auto form = (data[0] & 2) != 0 ? spec::FetchForm::platform : spec::FetchForm::single;
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
    check_round_trip(*shim, arch, form);
    return 0;
}
