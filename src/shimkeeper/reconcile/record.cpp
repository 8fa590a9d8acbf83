#include "shimkeeper/reconcile/record.hpp"

#include <sstream>

namespace shimkeeper::reconcile {

namespace {
constexpr std::string_view k_oci_scheme = "oci://"; // how FetchSource::display marks a reference
} // namespace

std::string options_fingerprint(const toml::table& options) {
    std::ostringstream out;
    out << toml::toml_formatter(options, toml::format_flags::none);
    return out.str();
}

store::InstalledShim record_of(const spec::ShimSpec& spec, const std::string& digest,
                               const std::string& binary_path) {
    store::InstalledShim record;
    record.name = spec.name;
    record.handler = spec.handler;
    record.runtime_type = spec.runtime_type;
    record.binary = spec.binary;
    record.binary_path = binary_path;
    record.version = spec.version;
    record.digest = digest;
    record.url = spec.fetch.display();
    record.path = spec.fetch.path;
    record.options_toml = options_fingerprint(spec.options);
    record.allow_unverified = spec.allow_unverified;
    record.adopt = spec.adopt;
    record.runtime_class = spec.runtime_class ? spec.runtime_class->name : "";
    record.origin = spec.location.to_string();
    record.runtime_type_derivation = spec.runtime_type_derivation;
    return record;
}

util::Expected<spec::ShimSpec> spec_of(const store::InstalledShim& record, int generation) {
    spec::ShimSpec spec;
    spec.name = record.name;
    spec.handler = record.handler;
    spec.runtime_type = record.runtime_type;
    spec.binary = record.binary;
    spec.version = record.version;
    if (record.url.starts_with(k_oci_scheme)) {
        spec.fetch.oci = record.url.substr(k_oci_scheme.size());
    } else {
        spec.fetch.url = record.url;
    }
    spec.fetch.path = record.path;
    // The stored digest pins the artifact even for a shim installed unverified: rollback must
    // bring back exactly those bytes, never what the URL serves today.
    spec.fetch.sha256 = record.digest;
    spec.allow_unverified = record.allow_unverified;
    spec.adopt = record.adopt;
    spec.runtime_type_derivation = record.runtime_type_derivation;
    if (!record.runtime_class.empty()) {
        spec.runtime_class = spec::RuntimeClassSpec{record.runtime_class};
    }
    spec.location = {"generation " + std::to_string(generation) +
                         (record.origin.empty() ? "" : " (from " + record.origin + ")"),
                     0, 0};
    try {
        spec.options = toml::parse(record.options_toml);
    } catch (const toml::parse_error& e) {
        return util::fail(util::ErrorCode::io,
                          "stored options of shim '" + record.name + "' in generation " +
                              std::to_string(generation) +
                              " do not parse: " + std::string(e.description()));
    }
    return spec;
}

util::Expected<std::vector<spec::ShimSpec>> specs_of(const store::Generation& generation) {
    std::vector<spec::ShimSpec> specs;
    for (const auto& record : generation.shims) {
        specs.push_back(TRY(spec_of(record, generation.number)));
    }
    return specs;
}

std::vector<std::string> differences(const store::InstalledShim& want,
                                     const store::InstalledShim& have) {
    std::vector<std::string> reasons;
    auto changed = [&](const char* what, const std::string& from, const std::string& to) {
        if (from != to) {
            reasons.push_back(std::string(what) + " " + (from.empty() ? "(none)" : from) + " -> " +
                              (to.empty() ? "(none)" : to));
        }
    };
    auto flag = [&](const char* what, bool from, bool to) {
        if (from != to) {
            reasons.push_back(std::string(what) + (to ? " set" : " cleared"));
        }
    };
    if (want.digest.empty()) {
        if (want.url != have.url) {
            reasons.emplace_back("new url (unverified artifact)");
        }
    } else {
        if (want.digest != have.digest) {
            reasons.emplace_back("new artifact");
        }
        changed("url", have.url, want.url);
    }
    changed("path", have.path, want.path);
    if (!want.digest.empty() && want.digest == have.digest && !want.binary_path.empty() &&
        want.binary_path != have.binary_path) {
        reasons.push_back("binary_path " + have.binary_path + " -> " + want.binary_path);
    }
    changed("handler", have.handler, want.handler);
    changed("runtime_type", have.runtime_type, want.runtime_type);
    changed("binary", have.binary, want.binary);
    if (want.options_toml != have.options_toml) {
        reasons.emplace_back("options changed");
    }
    changed("version", have.version, want.version);
    flag("allow_unverified", have.allow_unverified, want.allow_unverified);
    flag("adopt", have.adopt, want.adopt);
    changed("runtime_class", have.runtime_class, want.runtime_class);
    return reasons;
}

spec::ShimSpec as_derived_by(const spec::ShimSpec& spec, const store::InstalledShim& installed) {
    spec::ShimSpec derived = spec;
    if (spec.runtime_type_from_artifact &&
        installed.runtime_type_derivation.starts_with(k_derived_from_artifact)) {
        derived.runtime_type = installed.runtime_type;
        derived.binary = installed.binary;
        derived.runtime_type_derivation = installed.runtime_type_derivation;
        derived.runtime_type_from_artifact = false;
    }
    return derived;
}

} // namespace shimkeeper::reconcile
