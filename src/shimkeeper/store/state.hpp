// What the store records about installed shims: numbered generations, one of them current.
// Persisted as JSON in <store>/state/state.json, always written atomically.
#pragma once

#include "shimkeeper/util/error.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace shimkeeper::store {

// One shim as a generation installed it: the whole spec it was installed from (so that rollback
// re-installs exactly that) plus what staging found (digest, binary_path).
struct InstalledShim {
    std::string name;
    std::string handler;
    std::string runtime_type;
    std::string binary;      // link name in <store>/bin/
    std::string binary_path; // path of the executable inside the artifact directory
    std::string version;
    std::string digest;       // sha256 of the artifact as downloaded
    std::string url;          // the source: a URL, or "oci://<reference>"
    std::string path;         // OCI only: the file taken from the image or artifact
    std::string options_toml; // the spec's options table, serialised, to detect changes
    bool allow_unverified = false;
    bool adopt = false;
    std::string runtime_class;           // the RuntimeClass name; empty: none
    std::string origin;                  // where the spec came from ("shims.d/spin.toml:3:1")
    std::string runtime_type_derivation; // how runtime_type was derived; empty: the spec wrote it

    bool operator==(const InstalledShim&) const = default;
};

struct Generation {
    int number = 0;
    std::string created; // RFC 3339 UTC
    std::vector<InstalledShim> shims;

    const InstalledShim* find(const std::string& name) const;
};

struct StoreState {
    std::vector<Generation> generations; // ascending by number
    std::optional<int> current;          // number of the generation in use

    const Generation* current_generation() const;
    const Generation* find(int number) const;
    int next_number() const;
};

util::Expected<StoreState> load_state(const std::filesystem::path& state_file);
util::Expected<void> save_state(const std::filesystem::path& state_file, const StoreState& state);

} // namespace shimkeeper::store
