#include "shimkeeper/archive/archive_reader.hpp"

#include "shimkeeper/archive/bare_artifact.hpp"
#include "shimkeeper/archive/budget.hpp"

namespace shimkeeper::archive {

util::Expected<int> ArchiveReader::open_file(const std::filesystem::path& file) {
    // Not TRY: GCC 12 warns (-Wmaybe-uninitialized, a false positive) about a string moved out
    // of the statement expression.
    const util::Expected<std::string> magic = read_magic(file);
    if (!magic) {
        return std::unexpected(magic.error());
    }
    if (!is_gzip_magic(*magic)) {
        return archive_read_open_filename(m_reader.get(), file.c_str(), k_block_size);
    }
    m_inflater = TRY(GzipInflater::open(file));
    return m_inflater->attach(m_reader.get());
}

util::Expected<void> ArchiveReader::read_gzip_to_end(std::uint64_t max_bytes) {
    std::uint64_t after_the_end = 0;
    while (m_inflater) {
        const auto block = TRY(m_inflater->next_block());
        if (block.empty()) {
            break;
        }
        after_the_end += block.size();
        if (after_the_end > max_bytes) {
            return util::fail(util::ErrorCode::archive, "the gzip data goes on for more than " +
                                                            std::to_string(max_bytes) +
                                                            " bytes after the archive's end");
        }
    }
    return {};
}

util::Error ArchiveReader::failure(const std::string& context) const {
    if (m_inflater && m_inflater->failure()) {
        return util::Error(*m_inflater->failure()).with_context(context);
    }
    return archive_failure(m_reader.get(), context);
}

} // namespace shimkeeper::archive
