// node_exporter's textfile collector format: what the node looks like to Prometheus. The file is
// rendered whole from the counters and a few readings and replaced atomically (temp file in the
// same folder, fsync, rename), so a scrape never sees half a file; node_exporter reads only
// `*.prom` names, so the temp file is never scraped. Unchanged content is not written again: a
// converged apply stays a no-op on disk.
#pragma once

#include "shimkeeper/metrics/counters.hpp"

#include <filesystem>
#include <optional>
#include <string>

namespace shimkeeper::metrics {

struct NodeMetrics {
    Counters counters;
    std::size_t shims_installed = 0;       // shims of the current generation
    std::uint64_t store_bytes = 0;         // bytes of every artifact in the store
    std::optional<bool> cluster_connected; // only in cluster mode
};

inline constexpr const char* k_textfile_name = "shimkeeper.prom";

// The exposition text (HELP, TYPE, samples), metric names prefixed `shimkeeper_`.
std::string render_textfile(const NodeMetrics& metrics);

enum class Written { yes, unchanged };

// Replaces <dir>/shimkeeper.prom atomically with `text`, unless it already holds exactly that.
util::Expected<Written> write_textfile(const std::filesystem::path& dir, const std::string& text);

// Removes <dir>/shimkeeper.prom (reset: nothing of shimkeeper stays for node_exporter to serve);
// a missing file or folder is no error, and nothing else in the folder is touched.
util::Expected<void> remove_textfile(const std::filesystem::path& dir);

} // namespace shimkeeper::metrics
