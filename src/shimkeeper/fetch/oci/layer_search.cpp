#include "shimkeeper/fetch/oci/layer_search.hpp"

#include "shimkeeper/archive/archive_reader.hpp"
#include "shimkeeper/archive/entry_path.hpp"

#include <archive_entry.h>
#include <array>

namespace shimkeeper::fetch::oci {

namespace {

constexpr std::string_view k_whiteout = ".wh.";
constexpr std::string_view k_opaque = ".wh..wh..opq";

// True when `ancestor` is `path` itself or one of its parent directories.
bool covers(std::string_view ancestor, std::string_view path) {
    return ancestor == "." || path == ancestor ||
           (path.starts_with(ancestor) && path.size() > ancestor.size() &&
            path[ancestor.size()] == '/');
}

std::string directory_of(std::string_view entry) {
    auto slash = entry.rfind('/');
    return slash == std::string_view::npos ? "." : std::string(entry.substr(0, slash));
}

std::string join(const std::string& dir, std::string_view name) {
    return dir == "." ? std::string(name) : dir + "/" + std::string(name);
}

util::Expected<void> extract_to(const archive::ArchiveReader& reader, PartialFile& out,
                                std::uint64_t max_size, const std::string& path) {
    TRY(out.restart()); // a later copy of the same path in one layer wins
    std::array<char, 64 * 1024> buffer{};
    std::uint64_t total = 0;
    while (true) {
        la_ssize_t got = archive_read_data(reader.get(), buffer.data(), buffer.size());
        if (got < 0) {
            return std::unexpected(reader.failure("reading " + path));
        }
        if (got == 0) {
            return {};
        }
        total += static_cast<std::uint64_t>(got);
        if (total > max_size) {
            return util::fail(util::ErrorCode::archive,
                              path + " is larger than the fetch max_size limit");
        }
        TRY(out.append(std::string_view(buffer.data(), static_cast<size_t>(got))));
    }
}

} // namespace

util::Expected<LayerSearch> search_layer(const std::filesystem::path& blob, const std::string& path,
                                         PartialFile& out, std::uint64_t max_size) {
    archive::ArchiveReader reader;
    if (reader.get() == nullptr) {
        return util::fail(util::ErrorCode::internal, "archive_read_new failed (out of memory)");
    }
    archive_read_support_filter_all(reader.get());
    archive_read_support_format_tar(reader.get());
    if (TRY(reader.open_file(blob)) != ARCHIVE_OK) {
        return std::unexpected(reader.failure(reader.gzip_failed() ? "reading the layer"
                                                                   : "layer is not a tar archive"));
    }
    LayerSearch result;
    bool found = false;
    while (true) {
        struct archive_entry* entry = nullptr;
        int rc = archive_read_next_header(reader.get(), &entry);
        if (rc == ARCHIVE_EOF) {
            break;
        }
        if (rc != ARCHIVE_OK && rc != ARCHIVE_WARN) {
            return std::unexpected(reader.failure("reading the layer"));
        }
        std::string_view raw = archive_entry_pathname(entry) ? archive_entry_pathname(entry) : "";
        while (raw.starts_with('/')) {
            raw.remove_prefix(1);
        }
        auto name = archive::checked_entry_path(raw.empty() ? "." : raw);
        if (!name) {
            continue; // an entry no extraction would write cannot be the file we want
        }
        std::string dir = directory_of(*name);
        std::string_view base = std::string_view(*name).substr(dir == "." ? 0 : dir.size() + 1);
        if (base == k_opaque) {
            if (covers(dir, path) && dir != path && !found) {
                result = {LayerVerdict::hidden, "the opaque whiteout " + *name};
            }
            continue;
        }
        if (base.starts_with(k_whiteout)) {
            std::string deleted = join(dir, base.substr(k_whiteout.size()));
            if (covers(deleted, path) && !found) {
                result = {LayerVerdict::hidden, "the whiteout " + *name};
            }
            continue;
        }
        const bool is_link =
            archive_entry_hardlink(entry) != nullptr || archive_entry_filetype(entry) == AE_IFLNK;
        if (*name == path) {
            if (is_link || archive_entry_filetype(entry) != AE_IFREG) {
                return util::fail(util::ErrorCode::archive,
                                  path + " is a " +
                                      (is_link ? "link" : "directory or special file") +
                                      " in the layer; set fetch path to the file itself");
            }
            TRY(extract_to(reader, out, max_size, path));
            found = true;
            result = {LayerVerdict::found, {}};
        } else if (covers(*name, path) && archive_entry_filetype(entry) != AE_IFDIR && !found) {
            result = {LayerVerdict::hidden, *name + " (not a directory)"};
        }
    }
    return result;
}

} // namespace shimkeeper::fetch::oci
