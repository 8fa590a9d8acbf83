#include "shimkeeper/cli/oci_source.hpp"

#include "shimkeeper/spec/architecture.hpp"
#include "shimkeeper/spec/oci_reference.hpp"
#include "shimkeeper/store/oci_record.hpp"

namespace shimkeeper::cli {

namespace {

std::optional<store::OciResolution> resolution_of(const spec::FetchSource& source,
                                                  const store::Store& store) {
    auto reference = spec::parse_oci_reference(source.oci);
    if (!reference || !reference->digest) {
        return std::nullopt; // an unpinned tag is resolved anew by every fetch
    }
    auto record = store::load_oci_resolution(store, *reference->digest, source.path,
                                             spec::node_architecture());
    return record ? *record : std::nullopt;
}

} // namespace

nlohmann::json oci_source_json(const spec::FetchSource& source, const store::Store& store) {
    if (source.oci.empty()) {
        return nullptr;
    }
    nlohmann::json out{{"reference", source.oci}, {"path", source.path}, {"resolved", nullptr}};
    if (auto record = resolution_of(source, store)) {
        out["resolved"] = {{"architecture", record->architecture},
                           {"index_digest", record->index_digest},
                           {"manifest_digest", record->manifest_digest},
                           {"layer_digest", record->layer_digest},
                           {"kind", record->kind},
                           {"digest", record->artifact_digest}};
    }
    return out;
}

std::vector<std::string> oci_source_lines(const spec::FetchSource& source,
                                          const store::Store& store) {
    if (source.oci.empty()) {
        return {};
    }
    std::vector<std::string> lines{"oci://" + source.oci +
                                   (source.path.empty() ? "" : ", path " + source.path)};
    auto record = resolution_of(source, store);
    if (!record) {
        lines.emplace_back("not resolved on this node yet (the next fetch resolves it)");
        return lines;
    }
    std::string text = record->kind + " for linux/" + record->architecture + ": ";
    if (!record->index_digest.empty()) {
        text += "index " + record->index_digest + " -> ";
    }
    text += "manifest " + record->manifest_digest + ", layer " + record->layer_digest +
            ", file sha256:" + record->artifact_digest;
    lines.push_back(text);
    return lines;
}

} // namespace shimkeeper::cli
