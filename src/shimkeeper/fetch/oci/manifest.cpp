#include "shimkeeper/fetch/oci/manifest.hpp"

#include "shimkeeper/spec/oci_reference.hpp"

#include <nlohmann/json.hpp>

namespace shimkeeper::fetch::oci {

namespace {

using nlohmann::json;

util::Error bad(const std::string& what, const std::string& why) {
    return util::Error(util::ErrorCode::network,
                       what + " is not a usable OCI document: " + why +
                           "; check that the reference names an image or artifact");
}

std::optional<std::string> text_field(const json& object, const char* key) {
    auto found = object.find(key);
    if (found == object.end() || !found->is_string()) {
        return std::nullopt;
    }
    return found->get<std::string>();
}

util::Expected<Descriptor> parse_descriptor(const json& node, const std::string& where,
                                            const std::string& what) {
    if (!node.is_object()) {
        return std::unexpected(bad(what, where + " is not an object"));
    }
    Descriptor descriptor;
    descriptor.media_type = text_field(node, "mediaType").value_or("");
    auto digest = text_field(node, "digest");
    auto normal = digest ? spec::normalise_digest(*digest) : std::nullopt;
    if (!normal) {
        return std::unexpected(bad(what, where + ".digest is missing or not sha256:<64 hex>" +
                                             (digest ? " (\"" + *digest + "\")" : "")));
    }
    descriptor.digest = *normal;
    auto size = node.find("size");
    if (size == node.end() || !size->is_number_unsigned()) {
        return std::unexpected(bad(what, where + ".size is missing or not a byte count"));
    }
    descriptor.size = size->get<std::uint64_t>();
    if (auto platform = node.find("platform"); platform != node.end() && platform->is_object()) {
        descriptor.platform = Platform{text_field(*platform, "os").value_or(""),
                                       text_field(*platform, "architecture").value_or(""),
                                       text_field(*platform, "variant").value_or("")};
    }
    if (auto notes = node.find("annotations"); notes != node.end() && notes->is_object()) {
        for (const auto& [key, value] : notes->items()) {
            if (value.is_string()) {
                descriptor.annotations.emplace(key, value.get<std::string>());
            }
        }
    }
    return descriptor;
}

util::Expected<std::vector<Descriptor>> parse_list(const json& document, const char* key,
                                                   const std::string& what) {
    auto list = document.find(key);
    if (list == document.end() || !list->is_array()) {
        return std::unexpected(bad(what, std::string(key) + " is missing or not an array"));
    }
    std::vector<Descriptor> result;
    for (std::size_t i = 0; i < list->size(); ++i) {
        result.push_back(TRY(
            parse_descriptor((*list)[i], std::string(key) + "[" + std::to_string(i) + "]", what)));
    }
    return result;
}

} // namespace

std::string manifest_accept_header() {
    return "Accept: " + std::string(media::oci_index) + ", " + std::string(media::oci_manifest) +
           ", " + std::string(media::docker_list) + ", " + std::string(media::docker_manifest);
}

util::Expected<ManifestDocument>
parse_manifest(std::string_view bytes, std::string_view content_type, const std::string& what) {
    json document = json::parse(bytes, nullptr, false);
    if (document.is_discarded() || !document.is_object()) {
        return std::unexpected(bad(what, "not a JSON object"));
    }
    std::string type = text_field(document, "mediaType").value_or(std::string(content_type));
    if (auto semicolon = type.find(';'); semicolon != std::string::npos) {
        type.resize(semicolon);
    }
    bool is_index = type == media::oci_index || type == media::docker_list;
    bool is_manifest = type == media::oci_manifest || type == media::docker_manifest;
    if (!is_index && !is_manifest) {
        // An OCI document may leave mediaType out: its shape says which one it is.
        is_index = document.contains("manifests");
        is_manifest = !is_index && document.contains("layers");
    }
    if (is_index) {
        return Index{TRY(parse_list(document, "manifests", what))};
    }
    if (!is_manifest) {
        return std::unexpected(
            bad(what, "media type '" + type + "' is neither an image index nor a manifest"));
    }
    Manifest manifest;
    auto config = document.find("config");
    if (config == document.end()) {
        return std::unexpected(bad(what, "config is missing"));
    }
    manifest.config = TRY(parse_descriptor(*config, "config", what));
    manifest.layers = TRY(parse_list(document, "layers", what));
    manifest.artifact_type =
        text_field(document, "artifactType").value_or(manifest.config.media_type);
    return manifest;
}

} // namespace shimkeeper::fetch::oci
