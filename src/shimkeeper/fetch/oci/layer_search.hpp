// Finding one file in an image's layers without unpacking the image. Applying layers in order
// and reading `path` at the end gives the same answer as reading the layers top-down: the
// first layer (from the top) that holds `path` provides it, unless a layer above it deleted it
// with a whiteout (".wh.<name>" deletes <name>; ".wh..wh..opq" in a directory hides everything
// lower layers put there) or replaced one of its parent directories by something else. So a
// search stops at the first layer that decides, and fetches no layer below it.
#pragma once

#include "shimkeeper/fetch/partial_file.hpp"
#include "shimkeeper/util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <string>

namespace shimkeeper::fetch::oci {

enum class LayerVerdict {
    found,  // the layer holds `path`: extracted
    hidden, // the layer deletes `path` (or a parent) for every layer below
    absent, // the layer says nothing about `path`: look below
};

struct LayerSearch {
    LayerVerdict verdict = LayerVerdict::absent;
    std::string reason; // hidden: the whiteout or entry that hides `path`
};

// Reads the layer `blob` (tar, gzip or zstd tar; the compression is detected from the bytes)
// looking for `path` (normalised, relative: "usr/bin/shim"). When found, its bytes are written
// to `out` (emptied first, at most `max_size` bytes, hashed on the way). A link or directory at
// `path` is an error naming it: name the file itself.
util::Expected<LayerSearch> search_layer(const std::filesystem::path& blob, const std::string& path,
                                         PartialFile& out, std::uint64_t max_size);

} // namespace shimkeeper::fetch::oci
