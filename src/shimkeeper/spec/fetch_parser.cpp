#include "shimkeeper/spec/fetch_parser.hpp"

#include "shimkeeper/spec/architecture.hpp"
#include "shimkeeper/spec/grammar.hpp"
#include "shimkeeper/spec/oci_reference.hpp"

#include <vector>

namespace shimkeeper::spec {

namespace {

constexpr std::string_view k_platform_label = "[[shim.fetch.platform]]";

util::Expected<std::optional<std::string>> read_path(const TableReader& table) {
    auto path = TRY(table.string("path"));
    if (!path) {
        return std::nullopt;
    }
    auto normal = normalise_oci_path(*path);
    if (!normal) {
        return table.fail_key("path", "must name a file inside the image (\"usr/bin/shim\"), "
                                      "without '.' or '..' parts, got \"" +
                                          *path + "\"");
    }
    return normal;
}

// oci (+ optional path) of one table: the reference's digest pin is the verification.
util::Expected<FetchSource> parse_oci_source(const TableReader& table, Unverified unverified) {
    FetchSource source;
    std::string text =
        TRY(table.required_string("oci", "oci = \"ghcr.io/example/shim:1.0@sha256:...\""));
    auto reference = parse_oci_reference(text);
    if (!reference) {
        return fail_at(table.where("oci"),
                       reference.error().message() + " (in " + table.label() + ")");
    }
    if (table.has("sha256")) {
        return table.fail_key("sha256", "does not go with oci: the reference's @sha256: digest "
                                        "pins the manifest and verifies everything fetched");
    }
    if (!reference->digest && unverified == Unverified::refuse) {
        return fail_at(table.where("oci"),
                       "the reference \"" + text +
                           "\" has no @sha256: digest, so the fetch could not be verified; "
                           "append @sha256:<manifest digest> (skopeo inspect --format "
                           "'{{.Digest}}' docker://REF prints it), or set allow_unverified = "
                           "true in the [[shim]]");
    }
    source.oci = reference->to_string();
    source.path = TRY(read_path(table)).value_or("");
    return source;
}

// url + sha256, or oci (+ path), of one table ([shim.fetch] or one platform entry).
util::Expected<FetchSource> parse_source(const TableReader& table, Unverified unverified) {
    if (table.has("oci")) {
        if (table.has("url")) {
            return fail_at(table.where("url"), table.label() + " has both url and oci; a shim "
                                                               "has one source: keep one of them");
        }
        return parse_oci_source(table, unverified);
    }
    if (table.has("path")) {
        return table.fail_key("path", "goes with oci only (the file to take from an image); "
                                      "a url's archive is searched for the shim's binary");
    }
    FetchSource source;
    source.url = TRY(table.required_string(
        "url", "url = \"https://example.org/containerd-shim-spin-v2.tar.gz\""));
    if (auto problem = url_problem(source.url)) {
        return fail_at(table.where("url"), *problem + " (in " + table.label() + ")");
    }
    if (auto digest = TRY(table.string("sha256"))) {
        source.sha256 = normalise_sha256(*digest);
        if (!source.sha256) {
            return table.fail_key("sha256", "must be exactly 64 hexadecimal digits (the output "
                                            "of sha256sum on the archive), got \"" +
                                                *digest + "\"");
        }
    } else if (unverified == Unverified::refuse) {
        return fail_at(table.where(), table.label() +
                                          " has no sha256, so the download could not be verified; "
                                          "add sha256 = \"<64 hex digits from sha256sum>\", or set "
                                          "allow_unverified = true in the [[shim]] to accept an "
                                          "unverified download");
    }
    return source;
}

struct PlatformEntry {
    std::string arch; // normalised
    Location where;
    FetchSource source;
};

util::Expected<PlatformEntry> parse_platform(const toml::table& entry, const std::string& file,
                                             Unverified unverified) {
    TableReader table(entry, std::string(k_platform_label), file);
    TRY(table.only_keys({"arch", "url", "sha256", "oci", "path"}));
    std::string arch = TRY(table.required_string("arch", "arch = \"amd64\""));
    bool valid = !arch.empty();
    for (char c : arch) {
        valid = valid && ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '_' || c == '-');
    }
    if (!valid) {
        return table.fail_key("arch", "must be an architecture name such as amd64, arm64, "
                                      "x86_64 or aarch64, got \"" +
                                          arch + "\"");
    }
    PlatformEntry result{normalise_architecture(arch), table.where(), {}};
    result.source = TRY(parse_source(table, unverified));
    return result;
}

std::string arch_list(const std::vector<PlatformEntry>& entries) {
    std::string list;
    for (const PlatformEntry& entry : entries) {
        list += (list.empty() ? "" : ", ") + entry.arch;
    }
    return list;
}

} // namespace

util::Expected<FetchSource> parse_fetch(const TableReader& fetch, const std::string& arch,
                                        Unverified unverified) {
    TRY(fetch.only_keys({"url", "sha256", "oci", "path", "platform"}));
    const toml::node* platform = fetch.table().get("platform");
    if (platform == nullptr) {
        if (!fetch.has("url") && !fetch.has("oci")) {
            return fail_at(fetch.where(), fetch.label() +
                                              " needs url (with sha256) or oci (a pinned "
                                              "reference), or one [[shim.fetch.platform]] "
                                              "entry per architecture");
        }
        return parse_source(fetch, unverified);
    }
    if (fetch.has("url") || fetch.has("sha256") || fetch.has("oci")) {
        return fail_at(fetch.where(fetch.has("url")   ? "url"
                                   : fetch.has("oci") ? "oci"
                                                      : "sha256"),
                       fetch.label() + " has both url/sha256 and [[shim.fetch.platform]] "
                                       "entries; use one form: a single url + sha256, or a "
                                       "[[shim.fetch.platform]] entry (arch, url, sha256) for "
                                       "each architecture");
    }
    const toml::array* entries = platform->as_array();
    if (entries == nullptr || !entries->is_array_of_tables() || entries->empty()) {
        return fetch.fail_key("platform", "must be an array of tables: write one "
                                          "[[shim.fetch.platform]] (arch, url, sha256) per "
                                          "architecture");
    }

    // A path beside the platform entries is shared by those with an oci reference.
    auto shared_path = TRY(read_path(fetch));
    std::vector<PlatformEntry> parsed;
    for (const toml::node& entry : *entries) {
        PlatformEntry next = TRY(parse_platform(*entry.as_table(), fetch.file(), unverified));
        for (const PlatformEntry& earlier : parsed) {
            if (earlier.arch == next.arch) {
                return fail_at(next.where, "a second [[shim.fetch.platform]] for architecture '" +
                                               next.arch + "' (the first is at " +
                                               earlier.where.to_string() +
                                               "); keep one entry per architecture");
            }
        }
        parsed.push_back(std::move(next));
    }
    for (PlatformEntry& entry : parsed) {
        if (entry.arch == arch) {
            if (!entry.source.oci.empty() && entry.source.path.empty() && shared_path) {
                entry.source.path = *shared_path;
            }
            return std::move(entry.source);
        }
    }
    return fail_at(fetch.where(), "no [[shim.fetch.platform]] entry matches this node's "
                                  "architecture '" +
                                      arch + "' (entries exist for: " + arch_list(parsed) +
                                      "); add an entry with arch = \"" + arch + "\"");
}

} // namespace shimkeeper::spec
