// Stored artifacts are immutable, but a person with root can still edit one by hand. The drift
// check must notice without hashing megabytes on every no-op apply, so each stored binary's
// inode metadata (inode, size, mode, mtime, ctime) is recorded when it is first used and compared
// afterwards: a write, a chmod or a replacement changes at least one of them.
#pragma once

#include "shimkeeper/store/store.hpp"
#include "shimkeeper/util/error.hpp"

#include <string>

namespace shimkeeper::store {

enum class Integrity { intact, changed };

// Compares the binary with its line in <state>/fingerprints/<digest> (one line per binary path:
// two shims may use two binaries of one artifact); records it when it has none yet (an artifact
// stored before fingerprints existed, or a binary used for the first time).
util::Expected<Integrity> check_binary_fingerprint(const Store& store, const std::string& digest,
                                                   const std::string& binary_path);

// Records the binary as it is now (right after a commit), replacing the artifact's record.
util::Expected<void> record_binary_fingerprint(const Store& store, const std::string& digest,
                                               const std::string& binary_path);

// Removes the records of digests the store no longer holds (garbage collection's last step).
util::Expected<void> forget_stale_fingerprints(const Store& store);

} // namespace shimkeeper::store
