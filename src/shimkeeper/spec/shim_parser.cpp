#include "shimkeeper/spec/shim_parser.hpp"

#include "shimkeeper/spec/fetch_parser.hpp"
#include "shimkeeper/spec/grammar.hpp"
#include "shimkeeper/spec/table_reader.hpp"

namespace shimkeeper::spec {

namespace {

constexpr std::string_view k_name_grammar =
    "must match [a-z0-9]([-a-z0-9._]*[a-z0-9])? (lowercase letters, digits, '-', '.', '_'; "
    "starting and ending with a letter or digit) and be at most 63 characters";

util::Expected<std::string> read_name(const TableReader& table, std::string_view key,
                                      std::string_view example, std::string_view why) {
    std::string value = TRY(table.required_string(key, example));
    if (!is_valid_name(value)) {
        return table.fail_key(key, "is \"" + value + "\": it " + std::string(k_name_grammar) +
                                       ", because " + std::string(why));
    }
    return value;
}

util::Expected<std::optional<RuntimeClassSpec>> parse_runtime_class(const TableReader& shim) {
    const toml::table* table =
        TRY(shim.subtable("runtime_class", "[shim.runtime_class] with name = \"...\""));
    if (table == nullptr) {
        return std::nullopt;
    }
    TableReader runtime_class(*table, "[shim.runtime_class]", shim.file());
    TRY(runtime_class.only_keys({"name"}));
    RuntimeClassSpec spec;
    spec.name = TRY(read_name(runtime_class, "name", "name = \"wasmtime-spin-v2\"",
                              "it becomes the name of a Kubernetes RuntimeClass object"));
    return spec;
}

util::Expected<std::string> read_binary(const TableReader& shim, const std::string& runtime_type) {
    if (auto binary = TRY(shim.string("binary"))) {
        if (auto problem = binary_problem(*binary)) {
            return fail_at(shim.where("binary"), *problem + " (got \"" + *binary + "\")");
        }
        return std::move(*binary);
    }
    std::string derived = default_binary_for(runtime_type);
    if (auto problem = binary_problem(derived)) {
        return fail_at(shim.where("runtime_type"),
                       "cannot derive the binary name from runtime_type \"" + runtime_type +
                           "\" (" + *problem + "); set binary = \"<file in the archive>\"");
    }
    return derived;
}

} // namespace

util::Expected<ShimSpec> parse_shim(const toml::table& table, const std::string& file,
                                    const std::string& arch) {
    TableReader shim(table, "[[shim]]", file);
    TRY(shim.only_keys({"name", "handler", "runtime_type", "binary", "version", "options",
                        "allow_unverified", "adopt", "fetch", "runtime_class"}));

    ShimSpec spec;
    spec.location = shim.where();
    spec.name = TRY(read_name(shim, "name", "name = \"spin-v2\"",
                              "it names the shim's files in the store and its node label "
                              "shim.containerd.x-k8s.io/<name>"));
    spec.handler = TRY(read_name(shim, "handler", "handler = \"spin\"",
                                 "it becomes a key in containerd's config and the handler of a "
                                 "RuntimeClass"));
    spec.runtime_type =
        TRY(shim.required_string("runtime_type", "runtime_type = \"io.containerd.spin.v2\""));
    if (auto problem = runtime_type_problem(spec.runtime_type)) {
        return fail_at(shim.where("runtime_type"),
                       *problem + " (got \"" + spec.runtime_type + "\")");
    }
    spec.binary = TRY(read_binary(shim, spec.runtime_type));
    if (auto version = TRY(shim.string("version"))) {
        if (auto problem = version_problem(*version)) {
            return fail_at(shim.where("version"), *problem);
        }
        spec.version = std::move(*version);
    }
    if (const toml::table* options =
            TRY(shim.subtable("options", "e.g. options = { SystemdCgroup = true }"))) {
        spec.options = *options;
    }
    spec.allow_unverified = TRY(shim.boolean("allow_unverified")).value_or(false);
    spec.adopt = TRY(shim.boolean("adopt")).value_or(false);

    const toml::table* fetch = TRY(shim.subtable("fetch", "[shim.fetch] with url and sha256"));
    if (fetch == nullptr) {
        return fail_at(shim.where(), "[[shim]] '" + spec.name +
                                         "' has no [shim.fetch]; add [shim.fetch] with url and "
                                         "sha256, or [[shim.fetch.platform]] entries");
    }
    spec.fetch = TRY(parse_fetch(TableReader(*fetch, "[shim.fetch]", file), arch,
                                 spec.allow_unverified ? Unverified::allow : Unverified::refuse));
    spec.runtime_class = TRY(parse_runtime_class(shim));
    return spec;
}

} // namespace shimkeeper::spec
