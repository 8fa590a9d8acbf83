// Read, change, write with the read's resourceVersion; on 409 Conflict read again and redo the
// change, a bounded number of times. The change runs on the freshest object each time, so it
// must be a function of that object, not of anything read earlier.
#pragma once

#include "shimkeeper/kubeapi/api_client.hpp"

#include <functional>

namespace shimkeeper::kubeapi {

enum class Changed { no, yes };

// `change` edits the object in place and says whether there is anything to write; `no` ends
// without a write and returns the object as read. Conflicts beyond `attempts` are an Error
// saying so.
util::Expected<nlohmann::json> update_with_retry(
    ApiClient& client, const Resource& resource, std::string_view ns, std::string_view name,
    const std::function<util::Expected<Changed>(nlohmann::json&)>& change, int attempts = 5);

} // namespace shimkeeper::kubeapi
