#include "shimkeeper/cluster/agent/cluster_outage.hpp"

namespace shimkeeper::cluster::agent {

std::optional<ApiAnswer> outage_of(const util::Error& error) {
    switch (error.code()) {
    case util::ErrorCode::network:
        return ApiAnswer::unanswered;
    case util::ErrorCode::refused:
        // Renewing the credential is the fix; meanwhile the node's own files must still apply.
        return ApiAnswer::refused;
    default:
        return std::nullopt;
    }
}

bool update_outage_since(ClusterSnapshot& kept, ApiAnswer answer, const std::string& now) {
    bool changed = false;
    switch (answer) {
    case ApiAnswer::unproven:
        break;
    case ApiAnswer::answered:
        changed = !kept.unreachable_since.empty() || !kept.refused_since.empty();
        kept.unreachable_since.clear();
        kept.refused_since.clear();
        break;
    case ApiAnswer::unanswered:
    case ApiAnswer::refused: {
        if (kept.unreachable_since.empty()) {
            kept.unreachable_since = now;
            changed = true;
        }
        const bool refused = answer == ApiAnswer::refused;
        if (refused != !kept.refused_since.empty()) {
            kept.refused_since = refused ? now : std::string();
            changed = true;
        }
        break;
    }
    }
    return changed;
}

} // namespace shimkeeper::cluster::agent
