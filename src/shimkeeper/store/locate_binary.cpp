#include "shimkeeper/store/locate_binary.hpp"

#include "shimkeeper/spec/grammar.hpp"

#include <algorithm>
#include <set>
#include <sys/stat.h>
#include <vector>

namespace shimkeeper::store {

namespace {

constexpr std::size_t k_listed_entries = 20;

std::string describe(const archive::UnpackedFile& file) {
    switch (file.kind) {
    case archive::EntryKind::directory:
        return file.path + "/";
    case archive::EntryKind::symlink:
        return file.path + " -> " + file.link_target;
    case archive::EntryKind::file:
        break;
    }
    return file.path + (file.executable ? " (executable)" : "");
}

std::string listing(const archive::UnpackResult& unpacked) {
    if (unpacked.files.empty()) {
        return "the artifact is empty";
    }
    std::string text = "the artifact holds: ";
    std::size_t shown = std::min(unpacked.files.size(), k_listed_entries);
    for (std::size_t i = 0; i < shown; ++i) {
        text += (i == 0 ? "" : ", ") + describe(unpacked.files[i]);
    }
    if (unpacked.files.size() > shown) {
        text += ", ... (" + std::to_string(unpacked.files.size() - shown) + " more)";
    }
    return text;
}

util::Expected<std::string> checked(const archive::UnpackedFile& file,
                                    const std::filesystem::path& dir) {
    if (file.kind == archive::EntryKind::symlink) {
        return util::fail(util::ErrorCode::archive,
                          "'" + file.path + "' in the artifact is a symlink to '" +
                              file.link_target + "'; the declared binary must be a regular file " +
                              "(set `binary` to the file it points to)");
    }
    if (file.kind == archive::EntryKind::directory) {
        return util::fail(util::ErrorCode::archive,
                          "'" + file.path + "' in the artifact is a directory, not the binary");
    }
    struct stat info {};
    std::filesystem::path on_disk = dir / file.path;
    if (::lstat(on_disk.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) {
        return util::fail(util::ErrorCode::archive,
                          on_disk.string() + " is missing or not a regular file after unpacking");
    }
    if ((info.st_mode & 0111) == 0) {
        return util::fail(
            util::ErrorCode::archive,
            "'" + file.path + "' in the artifact is not executable (mode " +
                std::to_string((info.st_mode >> 6) & 7) + std::to_string((info.st_mode >> 3) & 7) +
                std::to_string(info.st_mode & 7) + "); the archive must carry the executable bit");
    }
    return file.path;
}

} // namespace

util::Expected<std::string> locate_binary(const archive::UnpackResult& unpacked,
                                          const std::filesystem::path& dir,
                                          const std::string& binary) {
    std::vector<const archive::UnpackedFile*> candidates;
    for (const archive::UnpackedFile& file : unpacked.files) {
        if (file.path == binary) {
            return checked(file, dir);
        }
        if (file.kind != archive::EntryKind::directory &&
            std::filesystem::path(file.path).filename() == binary) {
            candidates.push_back(&file);
        }
    }
    if (candidates.size() == 1) {
        return checked(*candidates.front(), dir);
    }
    if (candidates.size() > 1) {
        std::string names;
        for (const archive::UnpackedFile* file : candidates) {
            names += (names.empty() ? "" : ", ") + file->path;
        }
        return util::fail(util::ErrorCode::archive,
                          "the artifact holds " + std::to_string(candidates.size()) +
                              " files named '" + binary + "' (" + names +
                              ") and none at the top level; cannot tell which is the shim");
    }
    return util::fail(util::ErrorCode::archive, "the artifact has no file named '" + binary +
                                                    "'; " + listing(unpacked) +
                                                    ". Set `binary` in the shim's spec to one "
                                                    "of these, or check the URL");
}

util::Expected<std::string> binary_saying_runtime_type(const archive::UnpackResult& unpacked,
                                                       const std::string& handler) {
    constexpr std::string_view k_fix = "; set spec.runtimeType (or spec.binary) in the Shim";
    if (!unpacked.was_archive) {
        return util::fail(util::ErrorCode::archive,
                          "the artifact is a single executable, which carries no file name to "
                          "derive the runtime type from" +
                              std::string(k_fix));
    }
    std::set<std::string> saying; // file names; one name in two folders is locate_binary's call
    for (const archive::UnpackedFile& file : unpacked.files) {
        const std::string name = std::filesystem::path(file.path).filename().string();
        if (file.kind == archive::EntryKind::file && file.executable &&
            spec::runtime_type_said_by_binary(name)) {
            saying.insert(name);
        }
    }
    if (saying.size() == 1) {
        return *saying.begin();
    }
    if (saying.empty()) {
        return util::fail(util::ErrorCode::archive,
                          "no executable in the artifact is named containerd-shim-<name>-v<N>, "
                          "which would say the runtime type; " +
                              listing(unpacked) + std::string(k_fix));
    }
    const std::string handlers_prefix = "containerd-shim-" + handler + "-v";
    std::vector<std::string> handlers;
    std::string names;
    for (const std::string& name : saying) {
        names += (names.empty() ? "" : ", ") + name;
        if (name.starts_with(handlers_prefix)) {
            handlers.push_back(name);
        }
    }
    if (handlers.size() == 1) {
        return handlers.front();
    }
    return util::fail(util::ErrorCode::archive,
                      "the artifact holds " + std::to_string(saying.size()) + " shims (" + names +
                          ") and " + (handlers.empty() ? "none" : std::to_string(handlers.size())) +
                          " named for the handler '" + handler + "'" + std::string(k_fix));
}

} // namespace shimkeeper::store
