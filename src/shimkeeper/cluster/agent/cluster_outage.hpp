// The outage rules of cluster mode, decided here alone. An API server that does not answer (a
// transport failure, a request past its bound, a 5xx) and one that refuses the node's credential
// (401, 403: a token expired or revoked) are ridden out on the last reading kept
// (cluster_memory.hpp); any other failure (a missing Node, a bad answer) is a mistake to fix, not
// an outage. The memory keeps since when. Both the reading a load falls back to and the pass
// settled after a reconcile stamp it through this one function, so that they cannot disagree
// about when an outage starts or ends.
#pragma once

#include "shimkeeper/cluster/agent/cluster_memory.hpp"
#include "shimkeeper/util/error.hpp"

#include <optional>
#include <string>

namespace shimkeeper::cluster::agent {

// What this node's requests met, as far as an outage goes.
enum class ApiAnswer {
    // Nothing that proves the API server answers or not: the reading came from the open watches
    // (a hanging API server keeps them open, an expired token does not close them) or from the
    // memory.
    unproven,
    answered,   // a request got an HTTP answer
    unanswered, // a request got no answer
    refused,    // the credential was refused
};

// A failed read as an outage (unanswered or refused); nullopt when it is none and the read
// fails.
std::optional<ApiAnswer> outage_of(const util::Error& error);

// Updates the kept reading's unreachable_since and refused_since for `answer` met at `now`
// (RFC 3339); true when either changed (the memory is to be saved):
//   - unanswered or refused: unreachable since the first failure, kept while failures last;
//   - refused: refused since the first of the latest refusals; a failure that is no refusal
//     ends them;
//   - answered: no outage;
//   - unproven: the outage kept stands, whatever it is.
bool update_outage_since(ClusterSnapshot& kept, ApiAnswer answer, const std::string& now);

} // namespace shimkeeper::cluster::agent
