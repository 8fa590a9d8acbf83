// RAII owners for libarchive handles, and the one place where ARCHIVE_* codes become util::Error.
// We only ever READ archives with libarchive: writing to disk is done by safe_tree.hpp.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <archive.h>
#include <memory>
#include <string>

namespace shimkeeper::archive {

struct ArchiveReadDeleter {
    void operator()(struct archive* handle) const { archive_read_free(handle); }
};
using ArchiveReadPtr = std::unique_ptr<struct archive, ArchiveReadDeleter>;

// The libarchive message for `handle`, or a fallback when libarchive has none.
inline std::string archive_message(struct archive* handle) {
    const char* text = archive_error_string(handle);
    return text != nullptr ? std::string(text) : std::string("unknown libarchive error");
}

// Error (ErrorCode::archive) "<context>: <libarchive message>".
inline util::Error archive_failure(struct archive* handle, const std::string& context) {
    return util::Error(util::ErrorCode::archive, context + ": " + archive_message(handle),
                       archive_errno(handle));
}

} // namespace shimkeeper::archive
