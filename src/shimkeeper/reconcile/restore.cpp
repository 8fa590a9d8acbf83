#include "shimkeeper/reconcile/restore.hpp"

#include "shimkeeper/containerd/write.hpp"
#include "shimkeeper/util/sha256.hpp"

namespace shimkeeper::reconcile {

util::Expected<void> restore_before_state(const Node& node, const JournalEntry& entry,
                                          const std::set<std::string>* written) {
    std::vector<std::string> edited_meanwhile;
    for (const JournalFile& file : entry.files) {
        if (written != nullptr && !written->contains(file.node_path)) {
            continue; // never written by this transaction: whatever is there is not ours
        }
        auto change = TRY(containerd::restore_previous(file.node_path, file.backup, node.root));
        if (change.before == change.after) {
            continue;
        }
        const std::string now = change.before ? util::sha256_hex(*change.before) : "";
        if (!file.after_sha256.empty() && now != file.after_sha256) {
            edited_meanwhile.push_back(file.node_path);
            continue;
        }
        TRY(containerd::write_change(change, node.root));
    }
    for (const JournalLink& link : entry.links) {
        if (node.store.binary_link_target(link.binary) == link.before) {
            continue;
        }
        if (link.before) {
            TRY(node.store.link_to(link.binary, *link.before));
        } else {
            TRY(node.store.unlink_binary(link.binary));
        }
    }
    if (!edited_meanwhile.empty()) {
        std::string files;
        for (const auto& path : edited_meanwhile) {
            files += (files.empty() ? "" : ", ") + path;
        }
        return util::fail(util::ErrorCode::changed,
                          files +
                              " changed on disk after shimkeeper wrote it; left as it is "
                              "(the copy from before is in " +
                              entry.files.front().backup + ")");
    }
    return {};
}

} // namespace shimkeeper::reconcile
