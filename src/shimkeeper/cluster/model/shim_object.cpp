#include "shimkeeper/cluster/model/shim_object.hpp"

#include "shimkeeper/cluster/model/fetch_type.hpp"

#include "shimkeeper/spec/architecture.hpp"
#include "shimkeeper/spec/grammar.hpp"
#include "shimkeeper/spec/oci_reference.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <limits>
#include <set>

namespace shimkeeper::cluster::model {

kubeapi::Resource shims_resource() {
    return {"containerd.x-k8s.io", "v1alpha1", "shims", kubeapi::Scope::cluster};
}

namespace {

using nlohmann::json;

constexpr const char* k_control_plane_label = "node-role.kubernetes.io/control-plane";
constexpr std::array<const char*, 2> k_http_entry_fields = {"location", "sha256"};
constexpr std::array<const char*, 2> k_oci_entry_fields = {"reference", "path"};

// Field access that names the object and the field in every error.
class ObjectReader {
public:
    explicit ObjectReader(std::string object) : m_object(std::move(object)) {}

    std::unexpected<util::Error> bad(const std::string& field, const std::string& what) const {
        return util::fail(util::ErrorCode::invalid_input, m_object + ": " + field + " " + what);
    }

    util::Expected<std::optional<std::string>> string(const json& parent, const char* key,
                                                      const std::string& field) const {
        auto it = parent.find(key);
        if (it == parent.end() || it->is_null()) {
            return std::nullopt;
        }
        if (!it->is_string()) {
            return bad(field, std::string("must be a string, not ") + it->type_name());
        }
        return it->get<std::string>();
    }

    util::Expected<std::string> required(const json& parent, const char* key,
                                         const std::string& field) const {
        auto value = TRY(string(parent, key, field));
        if (!value || value->empty()) {
            return bad(field, "is required");
        }
        return *value;
    }

    const std::string& object() const { return m_object; }

private:
    std::string m_object;
};

// Runtime options: JSON values become the TOML values containerd reads (a bool stays a bool:
// {"SystemdCgroup": true}); null has no TOML form.
util::Expected<toml::table> toml_of(const json& object, const ObjectReader& reader,
                                    const std::string& field);

util::Expected<void> add_value(toml::table& table, const std::string& key, const json& value,
                               const ObjectReader& reader, const std::string& field) {
    switch (value.type()) {
    case json::value_t::boolean:
        table.insert(key, value.get<bool>());
        return {};
    case json::value_t::number_unsigned:
        // TOML integers are 64-bit signed: a larger one would turn negative.
        if (value.get<std::uint64_t>() >
            static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
            return reader.bad(field + "." + key, "is larger than a TOML integer can hold");
        }
        table.insert(key, value.get<std::int64_t>());
        return {};
    case json::value_t::number_integer:
        table.insert(key, value.get<std::int64_t>());
        return {};
    case json::value_t::number_float:
        table.insert(key, value.get<double>());
        return {};
    case json::value_t::string:
        table.insert(key, value.get<std::string>());
        return {};
    case json::value_t::object:
        table.insert(key, TRY(toml_of(value, reader, field + "." + key)));
        return {};
    default:
        return reader.bad(field + "." + key,
                          std::string("is a JSON ") + value.type_name() +
                              ", which has no place in containerd's config (use a string, "
                              "number, boolean or object)");
    }
}

util::Expected<toml::table> toml_of(const json& object, const ObjectReader& reader,
                                    const std::string& field) {
    toml::table table;
    for (const auto& [key, value] : object.items()) {
        TRY(add_value(table, key, value, reader, field));
    }
    return table;
}

struct Number {
    bool is_integer = false;
    std::int64_t integer = 0;
    double floating = 0;
};

enum class NumberShape { none, integer, decimal };

// A decimal number as TOML writes one: -?digits without a leading zero, optionally .digits and
// an exponent. Not "inf", "nan", hex, a leading '+' or "0755" (a mode, most likely, which as a
// number would turn into 755). Scanned by hand: std::regex matches recursively, one stack frame
// per character, and a value of 20,000 digits overflowed the stack (found by fuzz_shim_object).
NumberShape number_shape(std::string_view text) {
    std::size_t i = text.starts_with('-') ? 1 : 0;
    const auto digits = [&] {
        const std::size_t start = i;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') {
            ++i;
        }
        return i - start;
    };
    const std::size_t integer_start = i;
    const std::size_t integer_digits = digits();
    if (integer_digits == 0 || (integer_digits > 1 && text[integer_start] == '0')) {
        return NumberShape::none;
    }
    NumberShape shape = NumberShape::integer;
    if (i < text.size() && text[i] == '.') {
        ++i;
        if (digits() == 0) {
            return NumberShape::none;
        }
        shape = NumberShape::decimal;
    }
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        ++i;
        if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
            ++i;
        }
        if (digits() == 0) {
            return NumberShape::none;
        }
        shape = NumberShape::decimal;
    }
    return i == text.size() ? shape : NumberShape::none;
}

std::optional<Number> number_said_by(const std::string& text) {
    const char* first = text.data();
    const char* last = text.data() + text.size();
    Number number;
    const NumberShape shape = number_shape(text);
    if (shape == NumberShape::integer) {
        auto [end, ec] = std::from_chars(first, last, number.integer);
        if (ec == std::errc() && end == last) {
            number.is_integer = true;
            return number;
        }
        return std::nullopt; // beyond 64 bits: a string, not a silently rounded float
    }
    if (shape == NumberShape::decimal) {
        auto [end, ec] = std::from_chars(first, last, number.floating);
        if (ec == std::errc() && end == last && std::isfinite(number.floating)) {
            return number;
        }
    }
    return std::nullopt;
}

// runtime-class-manager's containerdRuntimeOptions: every value a string, typed the way its
// installer types them in containerd's TOML: "true"/"false" -> boolean, an integer -> integer, a
// decimal number -> float, anything else stays a string.
util::Expected<toml::table> toml_of_string_map(const json& object, const ObjectReader& reader,
                                               const std::string& field) {
    toml::table table;
    for (const auto& [key, value] : object.items()) {
        if (!value.is_string()) {
            return reader.bad(field + "." + key,
                              std::string("must be a string (this field is a map of strings; "
                                          "use spec.options for typed values), not ") +
                                  value.type_name());
        }
        const std::string text = value.get<std::string>();
        if (text == "true" || text == "false") {
            table.insert(key, text == "true");
        } else if (auto number = number_said_by(text); number && number->is_integer) {
            table.insert(key, number->integer);
        } else if (number) {
            table.insert(key, number->floating);
        } else {
            table.insert(key, text);
        }
    }
    return table;
}

// An oci source (reference + optional path), as [shim.fetch] oci/path in TOML.
util::Expected<spec::FetchSource> oci_source_of(const json& entry, bool allow_unverified,
                                                const ObjectReader& reader,
                                                const std::string& field) {
    spec::FetchSource source;
    const std::string text = TRY(reader.required(entry, "reference", field + ".reference"));
    auto reference = spec::parse_oci_reference(text);
    if (!reference) {
        return reader.bad(field + ".reference", reference.error().message());
    }
    if (!reference->digest && !allow_unverified) {
        return reader.bad(field + ".reference",
                          "has no @sha256: digest, which is required unless "
                          "spec.allowUnverified is true (the fetch could not be verified)");
    }
    source.oci = reference->to_string();
    if (auto path = TRY(reader.string(entry, "path", field + ".path"))) {
        auto normal = spec::normalise_oci_path(*path);
        if (!normal) {
            return reader.bad(field + ".path", "must name a file inside the image, without '.' "
                                               "or '..' parts or control characters");
        }
        source.path = *normal;
    }
    return source;
}

util::Expected<spec::FetchSource> source_of(const json& entry, bool allow_unverified,
                                            const ObjectReader& reader, const std::string& field,
                                            bool oci) {
    if (oci) {
        return oci_source_of(entry, allow_unverified, reader, field);
    }
    spec::FetchSource source;
    source.url = TRY(reader.required(entry, "location", field + ".location"));
    if (auto problem = spec::url_problem(source.url)) {
        return reader.bad(field + ".location", *problem);
    }
    if (auto digest = TRY(reader.string(entry, "sha256", field + ".sha256"))) {
        source.sha256 = spec::normalise_sha256(*digest);
        if (!source.sha256) {
            return reader.bad(field + ".sha256", "must be exactly 64 hexadecimal digits");
        }
    } else if (!allow_unverified) {
        return reader.bad(field + ".sha256",
                          "is missing: the shim runs as root on every selected node, so "
                          "shimkeeper installs only bytes it can verify; add the artifact's "
                          "sha256, or set spec.allowUnverified: true to install it unverified "
                          "(development only)");
    }
    return source;
}

util::Expected<spec::FetchSource> fetch_of(const json& spec, bool allow_unverified,
                                           const std::string& arch, const ObjectReader& reader) {
    auto strategy = spec.find("fetchStrategy");
    if (strategy == spec.end() || !strategy->is_object()) {
        return reader.bad("spec.fetchStrategy", "is required");
    }
    const FetchStrategyForm form = TRY(fetch_strategy_form(*strategy, reader.object()));
    const bool oci = form.type == FetchType::oci;
    if (form.source != "platforms") {
        return source_of((*strategy)[form.source], allow_unverified, reader,
                         "spec.fetchStrategy." + form.source, oci);
    }
    const json& list = (*strategy)["platforms"];
    if (!list.is_array()) {
        return reader.bad("spec.fetchStrategy.platforms", "must be a list");
    }
    std::set<std::string> seen;
    std::optional<spec::FetchSource> chosen;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string field = "spec.fetchStrategy.platforms[" + std::to_string(i) + "]";
        const std::string entry_arch =
            spec::normalise_architecture(TRY(reader.required(list[i], "arch", field + ".arch")));
        // runtime-class-manager names the OS of each entry; this node is Linux, and an entry
        // for another OS would never be chosen, so it is refused rather than ignored.
        if (auto os = TRY(reader.string(list[i], "os", field + ".os")); os && *os != "linux") {
            return reader.bad(field + ".os", "is \"" + *os +
                                                 "\": shimkeeper installs shims on Linux nodes "
                                                 "only (write os: linux, or leave it out)");
        }
        if (!seen.insert(entry_arch).second) {
            return reader.bad(field + ".arch", "names " + entry_arch + " a second time");
        }
        // The fields of the other type's entries, as the CRD refuses them.
        for (const char* other : oci ? k_http_entry_fields : k_oci_entry_fields) {
            if (list[i].is_object() && list[i].contains(other)) {
                return reader.bad(field + "." + other,
                                  std::string("belongs to ") + (oci ? "anonymousHttp" : "oci") +
                                      " entries, but " + form.reason +
                                      (oci ? "" : " (write type: oci for reference and path)"));
            }
        }
        auto source = TRY(source_of(list[i], allow_unverified, reader, field, oci));
        if (entry_arch == arch) {
            chosen = std::move(source);
        }
    }
    if (!chosen) {
        return reader.bad("spec.fetchStrategy.platforms", "has no entry for this node's "
                                                          "architecture, " +
                                                              arch);
    }
    return *chosen;
}

// metadata.<key> when it is a string, else `fallback`. The API server makes it one, but a node
// never trusts an object's shape: json::value() throws on any other (found by fuzz_shim_object).
std::string metadata_string(const json& shim, const char* key, const char* fallback) {
    if (!shim.is_object()) {
        return fallback;
    }
    auto metadata = shim.find("metadata");
    if (metadata == shim.end() || !metadata->is_object()) {
        return fallback;
    }
    auto value = metadata->find(key);
    return value != metadata->end() && value->is_string() ? value->get<std::string>() : fallback;
}

// spec.runtimeClass, or spec.runtimeclass as the shim lifecycle operator proposal spells it:
// the object (nullptr when absent) and the spelling used, for messages. Never both.
struct RuntimeClassField {
    const json* object = nullptr;
    std::string field;
};

util::Expected<RuntimeClassField> runtime_class_of(const json& spec_json,
                                                   const ObjectReader& reader) {
    auto camel = spec_json.find("runtimeClass");
    auto lower = spec_json.find("runtimeclass");
    if (camel != spec_json.end() && lower != spec_json.end()) {
        return reader.bad("spec.runtimeclass",
                          "and spec.runtimeClass are two spellings of one field; keep one");
    }
    auto found = camel != spec_json.end() ? camel : lower;
    if (found == spec_json.end() || found->is_null()) {
        return RuntimeClassField{};
    }
    std::string field = camel != spec_json.end() ? "spec.runtimeClass" : "spec.runtimeclass";
    if (!found->is_object()) {
        return reader.bad(field, "must be an object with a name");
    }
    return RuntimeClassField{&*found, std::move(field)};
}

// spec.runtimeType, else what spec.binary says, else the artifact decides on the node
// (README, "The Shim object"); the handler's guess stands in until then.
util::Expected<void> set_runtime_type(spec::ShimSpec& spec, const json& spec_json,
                                      const ObjectReader& reader) {
    auto runtime_type = TRY(reader.string(spec_json, "runtimeType", "spec.runtimeType"));
    auto binary = TRY(reader.string(spec_json, "binary", "spec.binary"));
    if (binary) {
        if (auto problem = spec::binary_problem(*binary)) {
            return reader.bad("spec.binary", *problem);
        }
    }
    if (runtime_type) {
        spec.runtime_type = *runtime_type;
        if (auto problem = spec::runtime_type_problem(spec.runtime_type)) {
            return reader.bad("spec.runtimeType", *problem);
        }
        spec.binary = binary.value_or(spec::default_binary_for(spec.runtime_type));
        if (auto problem = spec::binary_problem(spec.binary)) {
            return reader.bad("spec.binary", *problem);
        }
        return {};
    }
    if (binary) {
        auto said = spec::runtime_type_said_by_binary(*binary);
        if (!said) {
            return reader.bad("spec.binary", "is \"" + *binary +
                                                 "\", which does not say the runtime type "
                                                 "(containerd-shim-<name>-v<N>); set "
                                                 "spec.runtimeType");
        }
        spec.binary = *binary;
        spec.runtime_type = *said;
        spec.runtime_type_derivation = "derived from spec.binary " + *binary;
        return {};
    }
    // One segment of the runtime type's grammar: a handler's '.' would split it ("a..b").
    std::string segment = spec.handler;
    std::replace(segment.begin(), segment.end(), '.', '-');
    spec.runtime_type = "io.containerd." + segment + ".v2";
    spec.binary = spec::default_binary_for(spec.runtime_type);
    spec.runtime_type_from_artifact = true;
    spec.runtime_type_derivation =
        "to be derived from the artifact's containerd-shim-<name>-v<N> binary (until it is "
        "fetched: the handler's guess, " +
        spec.runtime_type + ")";
    return {};
}

} // namespace

util::Expected<ShimIdentity> shim_identity_of(const json& shim) {
    const std::string name = metadata_string(shim, "name", "");
    const ObjectReader reader("Shim/" + (name.empty() ? std::string("<unnamed>") : name));
    if (!spec::is_valid_name(name)) {
        return reader.bad("metadata.name", "is not a valid shim name ([a-z0-9]([-a-z0-9._]*"
                                           "[a-z0-9])?, at most 63 characters)");
    }
    auto spec_field = shim.find("spec");
    if (spec_field == shim.end() || !spec_field->is_object()) {
        return reader.bad("spec", "is required");
    }
    const json& spec_json = *spec_field;
    ShimIdentity identity{name, name, name, {}};
    const auto [runtime_class, runtime_class_field] = TRY(runtime_class_of(spec_json, reader));
    auto handler = TRY(reader.string(spec_json, "handler", "spec.handler"));
    if (runtime_class != nullptr) {
        const std::string field = runtime_class_field + ".handler";
        auto class_handler = TRY(reader.string(*runtime_class, "handler", field));
        if (handler && class_handler && *handler != *class_handler) {
            return reader.bad(field, "is \"" + *class_handler + "\" but spec.handler is \"" +
                                         *handler +
                                         "\": both name the one containerd handler; write it "
                                         "once, or the same in both");
        }
        if (!handler && class_handler) {
            if (!spec::is_valid_name(*class_handler)) {
                return reader.bad(field, "is \"" + *class_handler +
                                             "\": it becomes a key in containerd's config, so "
                                             "it must be a valid name");
            }
            handler = class_handler;
        }
    }
    identity.handler = handler.value_or(name);
    if (!spec::is_valid_name(identity.handler)) {
        return reader.bad("spec.handler", "is \"" + identity.handler +
                                              "\": it becomes a key in containerd's config, so "
                                              "it must be a valid name");
    }
    if (runtime_class != nullptr) {
        identity.runtime_class =
            TRY(reader.required(*runtime_class, "name", runtime_class_field + ".name"));
        if (!spec::is_valid_name(identity.runtime_class)) {
            return reader.bad(runtime_class_field + ".name", "is not a valid name");
        }
        auto extras = overhead_and_tolerations_of(*runtime_class, runtime_class_field);
        if (!extras) {
            return reader.bad(extras.error().field, extras.error().what);
        }
        identity.overhead_tolerations = std::move(*extras);
    }
    return identity;
}

util::Expected<spec::ShimSpec> shim_spec_of(const json& shim, const std::string& arch) {
    const ShimIdentity identity = TRY(shim_identity_of(shim));
    const json& spec_json = shim["spec"];
    const ObjectReader reader("Shim/" + identity.name);

    spec::ShimSpec spec;
    spec.name = identity.name;
    // is_origin_of_shim reads this shape back.
    spec.location = {reader.object() + "@" + metadata_string(shim, "resourceVersion", "?"), 0, 0};
    spec.handler = identity.handler;
    TRY(set_runtime_type(spec, spec_json, reader));
    auto options = spec_json.find("options");
    auto string_options = spec_json.find("containerdRuntimeOptions");
    if (options != spec_json.end() && string_options != spec_json.end()) {
        return reader.bad("spec.containerdRuntimeOptions",
                          "and spec.options both set the runtime's options; keep one");
    }
    if (options != spec_json.end()) {
        if (!options->is_object()) {
            return reader.bad("spec.options", "must be an object");
        }
        spec.options = TRY(toml_of(*options, reader, "spec.options"));
    }
    if (string_options != spec_json.end()) {
        if (!string_options->is_object()) {
            return reader.bad("spec.containerdRuntimeOptions", "must be a map of strings");
        }
        spec.options =
            TRY(toml_of_string_map(*string_options, reader, "spec.containerdRuntimeOptions"));
    }
    if (auto unverified = spec_json.find("allowUnverified"); unverified != spec_json.end()) {
        if (!unverified->is_boolean()) {
            return reader.bad("spec.allowUnverified", "must be true or false");
        }
        spec.allow_unverified = unverified->get<bool>();
    }
    spec.fetch = TRY(fetch_of(spec_json, spec.allow_unverified, arch, reader));
    if (spec_json.contains("runtimeClass") || spec_json.contains("runtimeclass")) {
        spec.runtime_class = spec::RuntimeClassSpec{identity.runtime_class};
    }
    return spec;
}

json spec_status_fields(const json& shim) {
    auto identity = shim_identity_of(shim);
    if (!identity) {
        return json::object();
    }
    spec::ShimSpec spec;
    spec.handler = identity->handler;
    if (!set_runtime_type(spec, shim["spec"], ObjectReader("Shim/" + identity->name))) {
        return json::object();
    }
    json fields{{"runtimeClass", identity->runtime_class}, {"handler", identity->handler}};
    if (spec.runtime_type_from_artifact) {
        fields["runtimeTypeFrom"] = "each node's artifact: the name of its "
                                    "containerd-shim-<name>-v<N> binary";
    } else {
        fields["runtimeType"] = spec.runtime_type;
        fields["runtimeTypeFrom"] = spec.runtime_type_derivation.empty()
                                        ? "spec.runtimeType"
                                        : spec.runtime_type_derivation;
    }
    return fields;
}

bool selects_node(const json& shim, const std::map<std::string, std::string>& labels) {
    const json* selector = nullptr;
    if (auto spec = shim.find("spec"); spec != shim.end() && spec->is_object()) {
        if (auto found = spec->find("nodeSelector"); found != spec->end() && found->is_object()) {
            selector = &*found;
        }
    }
    if (selector == nullptr) {
        return !labels.contains(k_control_plane_label);
    }
    for (const auto& [key, value] : selector->items()) {
        auto label = labels.find(key);
        if (label == labels.end() || !value.is_string() ||
            label->second != value.get<std::string>()) {
            return false;
        }
    }
    return true;
}

bool is_origin_of_shim(std::string_view origin, std::string_view name) {
    const std::string prefix = "Shim/" + std::string(name) + "@";
    return origin.starts_with(prefix);
}

} // namespace shimkeeper::cluster::model
