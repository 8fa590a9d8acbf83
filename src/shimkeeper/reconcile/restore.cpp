#include "shimkeeper/reconcile/restore.hpp"

#include "shimkeeper/containerd/write.hpp"

namespace shimkeeper::reconcile {

util::Expected<void> restore_before_state(const Node& node, const JournalEntry& entry) {
    for (const JournalFile& file : entry.files) {
        auto change = TRY(containerd::restore_previous(file.node_path, file.backup, node.root));
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
    return {};
}

} // namespace shimkeeper::reconcile
