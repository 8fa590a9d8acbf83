#include "shimkeeper/fetch/oci/oci_fetch.hpp"

#include "shimkeeper/fetch/oci/layer_search.hpp"
#include "shimkeeper/fetch/oci/platform.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/remove_on_exit.hpp"

namespace shimkeeper::fetch::oci {

namespace {

bool is_image_config(std::string_view type) {
    return type == "application/vnd.oci.image.config.v1+json" ||
           type == "application/vnd.docker.container.image.v1+json";
}

bool is_tar_layer(std::string_view type) {
    return type.find(".tar") != std::string_view::npos ||
           type.find(".rootfs.diff.") != std::string_view::npos;
}

std::string title_of(const Descriptor& layer) {
    auto found = layer.annotations.find(std::string(k_title_annotation));
    return found == layer.annotations.end() ? std::string() : found->second;
}

util::Expected<Descriptor> artifact_layer(const Manifest& manifest, const std::string& path,
                                          const std::string& what) {
    std::string titles;
    for (const Descriptor& layer : manifest.layers) {
        if (!path.empty() && title_of(layer) == path) {
            return layer;
        }
        titles += (titles.empty() ? "" : ", ") +
                  (title_of(layer).empty() ? layer.digest : title_of(layer));
    }
    if (path.empty() && manifest.layers.size() == 1) {
        return manifest.layers.front();
    }
    if (path.empty()) {
        return util::fail(util::ErrorCode::invalid_input,
                          what + " is an artifact of " + std::to_string(manifest.layers.size()) +
                              " files (" + titles +
                              "); set fetch path to the title of the one to take");
    }
    return util::fail(util::ErrorCode::not_found,
                      what + " has no file titled '" + path + "' (" + k_title_annotation.data() +
                          " of its layers: " + (titles.empty() ? "none" : titles) +
                          "); set fetch path to one of them");
}

util::Expected<DownloadResult> file_from_image(RegistryClient& client, const Manifest& manifest,
                                               const RegistryContext& context,
                                               const std::string& path, const std::string& what,
                                               std::string& layer_digest) {
    if (path.empty()) {
        return util::fail(util::ErrorCode::invalid_input,
                          what + " is a container image; set fetch path to the file to take from "
                                 "it (a tar archive or the shim binary itself)");
    }
    for (auto layer = manifest.layers.rbegin(); layer != manifest.layers.rend(); ++layer) {
        if (!is_tar_layer(layer->media_type)) {
            return util::fail(util::ErrorCode::network,
                              what + ": layer " + layer->digest + " has media type '" +
                                  layer->media_type + "', not a tar layer");
        }
        auto blob = TRY(client.blob(*layer));
        util::RemoveOnExit blob_guard(blob.file);
        PartialFile out = TRY(PartialFile::create(context.tmp_dir));
        auto search = search_layer(blob.file, path, out, context.settings.max_size);
        if (!search) {
            return std::unexpected(
                std::move(search).error().with_context(what + ", layer " + layer->digest));
        }
        if (search->verdict == LayerVerdict::hidden) {
            return util::fail(util::ErrorCode::not_found,
                              what + ": " + path + " is deleted by " + search->reason +
                                  " in layer " + layer->digest +
                                  "; set fetch path to a file the image really holds");
        }
        if (search->verdict == LayerVerdict::found) {
            layer_digest = layer->digest;
            std::uint64_t size = out.size();
            std::string digest = TRY(out.finish());
            return DownloadResult{out.keep(), digest, size, 1};
        }
    }
    return util::fail(util::ErrorCode::not_found,
                      what + " holds no file " + path + " in any of its " +
                          std::to_string(manifest.layers.size()) +
                          " layers; set fetch path to a file the image holds");
}

} // namespace

util::Expected<OciResult> fetch_oci(const RegistryContext& context, const OciRequest& request) {
    const spec::OciReference& ref = request.reference;
    auto hosts = TRY(registry_hosts(request.registry_config_dir, ref.registry));
    RegistryClient client(context, ref, std::move(hosts));
    OciResult result;

    auto top = TRY(client.manifest(ref.manifest_reference()));
    std::string what = ref.to_string();
    auto document = TRY(parse_manifest(top.bytes, top.content_type, what));
    if (const Index* index = std::get_if<Index>(&document)) {
        result.index_digest = top.digest;
        Descriptor chosen = TRY(select_platform(*index, request.architecture, what));
        top = TRY(client.manifest(chosen.digest));
        what += " (linux/" + request.architecture + ": " + chosen.digest + ")";
        document = TRY(parse_manifest(top.bytes, top.content_type, what));
        if (std::holds_alternative<Index>(document)) {
            return util::fail(util::ErrorCode::network,
                              what + " is an index inside an index; name the inner index");
        }
    }
    result.manifest_digest = top.digest;
    const Manifest& manifest = std::get<Manifest>(document);
    if (is_image_config(manifest.config.media_type)) {
        result.kind = "image";
        result.file = TRY(
            file_from_image(client, manifest, context, request.path, what, result.layer_digest));
    } else {
        result.kind = "artifact";
        Descriptor layer = TRY(artifact_layer(manifest, request.path, what));
        result.layer_digest = layer.digest;
        result.file = TRY(client.blob(layer));
    }
    util::RemoveOnExit guard(result.file.file);
    if (request.expected_sha256 && *request.expected_sha256 != result.file.sha256) {
        return util::fail(util::ErrorCode::checksum,
                          what + " now gives a file with sha256 " + result.file.sha256 +
                              ", not the recorded " + *request.expected_sha256 +
                              "; the registry content changed behind the reference");
    }
    guard.release();
    return result;
}

} // namespace shimkeeper::fetch::oci
