#include "shimkeeper/reconcile/restore.hpp"

#include "shimkeeper/util/atomic_file.hpp"
#include "shimkeeper/util/fs.hpp"

#include <cerrno>
#include <unistd.h>

namespace shimkeeper::reconcile {

util::Expected<void> restore_before_state(const Node& node, const JournalEntry& entry) {
    for (const JournalFile& file : entry.files) {
        const auto host_path = node.root.on_host(file.node_path);
        if (file.existed_before) {
            auto content = TRY(util::read_file(file.backup));
            auto current = util::read_file(host_path);
            if (!current || *current != content) {
                TRY(util::write_file_atomic(host_path, content));
            }
        } else if (::unlink(host_path.c_str()) != 0 && errno != ENOENT) {
            return std::unexpected(util::Error::from_errno(
                util::ErrorCode::io, "cannot remove " + host_path.string(), errno));
        }
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
