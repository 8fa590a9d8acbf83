#include "shimkeeper/store/oci_record.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"
#include "shimkeeper/util/json_reader.hpp"
#include "shimkeeper/util/sha256.hpp"

#include <nlohmann/json.hpp>

namespace shimkeeper::store {

namespace fs = std::filesystem;

namespace {

fs::path records_dir(const Store& store) {
    return store.state_dir() / "oci";
}

fs::path record_file(const Store& store, const std::string& pinned_digest, const std::string& path,
                     const std::string& architecture) {
    return records_dir(store) /
           (util::sha256_hex(pinned_digest + "\n" + path + "\n" + architecture) + ".json");
}

util::Expected<OciResolution> parse_record(const fs::path& file) {
    auto text = TRY(util::read_file(file));
    auto document = nlohmann::json::parse(text, nullptr, false);
    util::JsonReader reader(file, "", "remove it (the next fetch makes it again)");
    if (document.is_discarded() || !document.is_object()) {
        return reader.bad("is not a JSON object");
    }
    OciResolution record;
    record.reference = TRY(reader.string(document, "reference"));
    record.path = TRY(reader.string(document, "path"));
    record.architecture = TRY(reader.string(document, "architecture"));
    record.index_digest = TRY(reader.optional_string(document, "index_digest"));
    record.manifest_digest = TRY(reader.string(document, "manifest_digest"));
    record.layer_digest = TRY(reader.string(document, "layer_digest"));
    record.kind = TRY(reader.string(document, "kind"));
    record.artifact_digest = TRY(reader.string(document, "artifact_digest"));
    if (!util::is_sha256_hex(record.artifact_digest)) {
        return reader.bad("artifact_digest is not 64 hex digits");
    }
    return record;
}

} // namespace

util::Expected<std::optional<OciResolution>> load_oci_resolution(const Store& store,
                                                                 const std::string& pinned_digest,
                                                                 const std::string& path,
                                                                 const std::string& architecture) {
    if (pinned_digest.empty()) {
        return std::nullopt;
    }
    fs::path file = record_file(store, pinned_digest, path, architecture);
    std::error_code ec;
    if (!fs::exists(file, ec)) {
        return std::nullopt;
    }
    return TRY(parse_record(file));
}

util::Expected<void> save_oci_resolution(const Store& store, const std::string& pinned_digest,
                                         const OciResolution& resolution) {
    TRY(util::create_directories(records_dir(store)));
    nlohmann::json document{{"reference", resolution.reference},
                            {"path", resolution.path},
                            {"architecture", resolution.architecture},
                            {"index_digest", resolution.index_digest},
                            {"manifest_digest", resolution.manifest_digest},
                            {"layer_digest", resolution.layer_digest},
                            {"kind", resolution.kind},
                            {"artifact_digest", resolution.artifact_digest}};
    return util::write_file_atomic(
        record_file(store, pinned_digest, resolution.path, resolution.architecture),
        document.dump(2) + "\n");
}

util::Expected<void> forget_oci_resolutions(const Store& store) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(records_dir(store), ec)) {
        auto record = parse_record(entry.path());
        if (!record || !store.has_artifact(record->artifact_digest)) {
            TRY(util::remove_all(entry.path()));
        }
    }
    return {};
}

} // namespace shimkeeper::store
