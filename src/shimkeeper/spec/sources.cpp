#include "shimkeeper/spec/sources.hpp"

#include "shimkeeper/spec/desired_state.hpp"
#include "shimkeeper/spec/table_reader.hpp"
#include "shimkeeper/util/fs.hpp"

#include <algorithm>
#include <system_error>

namespace shimkeeper::spec {

namespace fs = std::filesystem;

namespace {

// The *.toml drop-ins of shims.d in lexical (byte) order; dot-files are ignored like editor
// and package-manager leftovers. An absent directory holds no drop-ins.
util::Expected<std::vector<fs::path>> list_drop_ins(const fs::path& dir) {
    std::vector<fs::path> files;
    if (dir.empty()) {
        return files;
    }
    std::error_code ec;
    const fs::file_status status = fs::status(dir, ec);
    if (status.type() == fs::file_type::not_found) {
        return files;
    }
    if (ec) {
        return std::unexpected(util::Error::from_errno(
            util::ErrorCode::io, "cannot inspect " + dir.string(), ec.value()));
    }
    if (!fs::is_directory(status)) {
        return util::fail(util::ErrorCode::invalid_input,
                          dir.string() + " is not a directory; shims.d must be a directory of "
                                         "*.toml drop-ins");
    }
    fs::directory_iterator it(dir, ec);
    for (; !ec && it != fs::directory_iterator(); it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.starts_with('.') || it->path().extension() != ".toml") {
            continue;
        }
        if (!fs::is_regular_file(it->path(), ec)) {
            return util::fail(util::ErrorCode::invalid_input,
                              it->path().string() +
                                  " is not a regular file; every shims.d/*.toml must be a "
                                  "drop-in file (remove it or rename it)");
        }
        files.push_back(it->path());
    }
    if (ec) {
        return std::unexpected(util::Error::from_errno(util::ErrorCode::io,
                                                       "cannot list " + dir.string(), ec.value()));
    }
    std::sort(files.begin(), files.end(),
              [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
    return files;
}

// One file's shims; `agent_config` true for shimkeeper.toml, whose settings tables are read by
// load_agent_settings and skipped here.
util::Expected<void> add_file(DesiredShims& out, const fs::path& path, const std::string& arch,
                              bool agent_config) {
    auto text = util::read_file(path);
    if (!text) {
        if (agent_config && text.error().code() == util::ErrorCode::not_found) {
            return {}; // an absent agent config holds no shims (-c FILE is checked by settings)
        }
        return std::unexpected(std::move(text).error());
    }
    DesiredState parsed = TRY(parse_desired_state_text(*text, path.string(), arch, agent_config));
    for (ShimSpec& shim : parsed.shims) {
        out.shims.push_back(std::move(shim));
    }
    out.origins.push_back(path.string());
    return {};
}

} // namespace

util::Expected<DesiredShims> FileSource::load() {
    DesiredShims out;
    if (!m_agent_config.empty()) {
        TRY(add_file(out, m_agent_config, m_arch, true));
    }
    for (const fs::path& drop_in : TRY(list_drop_ins(m_shims_dir))) {
        TRY(add_file(out, drop_in, m_arch, false));
    }
    return out;
}

util::Expected<void> check_unique(const std::vector<ShimSpec>& earlier, const ShimSpec& shim) {
    for (const ShimSpec& other : earlier) {
        if (other.name == shim.name) {
            return fail_at(shim.location,
                           "shim name '" + shim.name + "' is already used by the shim at " +
                               other.location.to_string() + "; every shim needs its own name");
        }
        if (other.handler == shim.handler) {
            return fail_at(shim.location, "handler '" + shim.handler + "' of shim '" + shim.name +
                                              "' is already used by shim '" + other.name + "' at " +
                                              other.location.to_string() +
                                              "; containerd holds one runtime per handler");
        }
        // A binary still to be named by its artifact is checked once it is
        // (reconcile/derive_runtime.hpp): the handlers' guesses must not clash meanwhile.
        if (other.binary == shim.binary && !other.runtime_type_from_artifact &&
            !shim.runtime_type_from_artifact) {
            return fail_at(shim.location,
                           "binary '" + shim.binary + "' of shim '" + shim.name +
                               "' is already used by shim '" + other.name + "' at " +
                               other.location.to_string() +
                               "; each shim needs its own binary name (it names the link in "
                               "the store's bin/)");
        }
    }
    return {};
}

util::Expected<DesiredShims> gather(const std::vector<DesiredSource*>& sources) {
    DesiredShims all;
    for (DesiredSource* source : sources) {
        DesiredShims one = TRY(source->load());
        const auto earlier = static_cast<std::ptrdiff_t>(all.shims.size());
        for (ShimSpec& shim : one.shims) {
            auto unique = check_unique(all.shims, shim);
            if (!unique && source->yields_on_conflict()) {
                // Only a clash with an earlier source yields; within one source it is an error.
                const std::vector<ShimSpec> own(all.shims.begin() + earlier, all.shims.end());
                if (check_unique(own, shim)) {
                    all.warnings.push_back(unique.error().message() +
                                           "; the node's own file wins, this one is left out");
                    continue;
                }
            }
            if (!unique) {
                return std::unexpected(unique.error());
            }
            all.shims.push_back(std::move(shim));
        }
        all.origins.insert(all.origins.end(), one.origins.begin(), one.origins.end());
        all.warnings.insert(all.warnings.end(), one.warnings.begin(), one.warnings.end());
    }
    return all;
}

} // namespace shimkeeper::spec
