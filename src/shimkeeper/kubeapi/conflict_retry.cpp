#include "shimkeeper/kubeapi/conflict_retry.hpp"

namespace shimkeeper::kubeapi {

util::Expected<nlohmann::json> update_with_retry(
    ApiClient& client, const Resource& resource, std::string_view ns, std::string_view name,
    const std::function<util::Expected<Changed>(nlohmann::json&)>& change, int attempts) {
    std::string last_conflict;
    for (int attempt = 0; attempt < attempts; ++attempt) {
        nlohmann::json object = TRY(client.get(resource, ns, name));
        if (TRY(change(object)) == Changed::no) {
            return object;
        }
        auto written = client.update(resource, ns, object);
        if (written || written.error().code() != util::ErrorCode::conflict) {
            return written;
        }
        last_conflict = written.error().message();
    }
    return util::fail(util::ErrorCode::conflict,
                      "gave up after " + std::to_string(attempts) +
                          " conflicting writes (others keep changing it): " + last_conflict);
}

} // namespace shimkeeper::kubeapi
