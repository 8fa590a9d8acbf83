// A libarchive reader on one file, whose gzip layer, if it has one, GzipInflater inflates
// (gzip_inflater.hpp says why); every other layer and format is libarchive's own.
#pragma once

#include "shimkeeper/archive/archive_handles.hpp"
#include "shimkeeper/archive/gzip_inflater.hpp"

#include <cstdint>
#include <filesystem>
#include <memory>

namespace shimkeeper::archive {

class ArchiveReader {
public:
    ArchiveReader() : m_reader(archive_read_new()) {}

    // Null when libarchive could not allocate the reader.
    struct archive* get() const {
        return m_reader.get();
    }

    // Opens the reader (its filters and formats chosen) on `file`: libarchive's status, as
    // archive_read_open_filename's; failure() says why when it is not ARCHIVE_OK.
    util::Expected<int> open_file(const std::filesystem::path& file);

    // Reads what the archive format left of the gzip layer, to its last member's trailer: the
    // tar format ends at its end-of-archive blocks, and the trailers' CRC-32 and length after
    // them are only checked once read. At most `max_bytes` inflated: a stream that goes on
    // past the archive's end for longer is refused, not inflated for minutes. Nothing to do
    // for other layers.
    util::Expected<void> read_gzip_to_end(std::uint64_t max_bytes);

    // True once igzip found the gzip layer damaged or cut short.
    bool gzip_failed() const { return m_inflater && m_inflater->failure(); }

    // Why reading failed: igzip's finding if the gzip layer was at fault (libarchive may have
    // put a message of its own over it), else libarchive's, each after "<context>: ".
    util::Error failure(const std::string& context) const;

private:
    std::unique_ptr<GzipInflater> m_inflater; // declared first: freed after the reader
    ArchiveReadPtr m_reader;
};

} // namespace shimkeeper::archive
