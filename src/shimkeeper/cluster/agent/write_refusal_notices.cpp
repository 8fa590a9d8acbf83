#include "shimkeeper/cluster/agent/write_refusal_notices.hpp"

#include "shimkeeper/cluster/model/shim_object.hpp"
#include "shimkeeper/cluster/model/write_refusals.hpp"

namespace shimkeeper::cluster::agent {

kubeapi::ObjectReference shim_reference(const std::string& name, const std::string& uid) {
    const kubeapi::Resource shims = model::shims_resource();
    return {shims.group + "/" + shims.version, "Shim", name, "", uid};
}

WriteRefusalNotices& WriteRefusalNotices::of_this_process() {
    static WriteRefusalNotices notices;
    return notices;
}

std::optional<util::Error>
WriteRefusalNotices::after_write(kubeapi::ApiClient& client, const std::string& node,
                                 const std::vector<kubeapi::ObjectReference>& shims,
                                 const std::string& action, const util::Error* refused) {
    // 401 and 403 (refused), and 400 or 422 (invalid_input): a ValidatingAdmissionPolicy denies
    // with 422 unless it names another reason.
    const bool told_refusal =
        refused != nullptr && (refused->code() == util::ErrorCode::refused ||
                               refused->code() == util::ErrorCode::invalid_input);
    if (refused != nullptr && !told_refusal) {
        return std::nullopt; // no answer, a conflict: not the operator's to fix
    }
    std::vector<const kubeapi::ObjectReference*> due;
    {
        std::lock_guard lock(m_mutex);
        const auto now = Clock::now();
        for (const auto& shim : shims) {
            const auto key = std::make_pair(shim.name, action);
            auto told = m_told.find(key);
            if (told_refusal) {
                if (told == m_told.end() || now - told->second >= model::k_refusal_repeat) {
                    m_told[key] = now;
                    due.push_back(&shim);
                }
            } else if (told != m_told.end()) {
                m_told.erase(told);
                due.push_back(&shim);
            }
        }
    }
    kubeapi::EventRecorder events(client, {model::k_agent_controller, model::agent_instance(node)});
    std::optional<util::Error> unsent;
    for (const auto* shim : due) {
        auto sent =
            told_refusal
                ? events.emit(*shim, kubeapi::EventType::warning, model::k_write_refused, action,
                              "node " + node + ": the API server refuses " + refused->message())
                : events.emit(*shim, kubeapi::EventType::normal, model::k_write_accepted, action,
                              "node " + node + ": the API server accepts its " + action +
                                  " write on Node " + node + " again");
        if (!sent && !unsent) {
            unsent = std::move(sent).error().with_context(
                "telling Shim " + shim->name + " that " +
                (told_refusal ? "a write is refused" : "a write is accepted"));
        }
    }
    return unsent;
}

} // namespace shimkeeper::cluster::agent
