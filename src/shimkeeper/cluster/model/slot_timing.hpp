// The timings of a rollout slot in one place, and the order the bound depends on. Every clock
// here is the judging machine's own monotonic clock, never a time read from the Lease.
//
//   lease            a slot's life without a renewal (the Lease's leaseDurationSeconds; the
//                    coordinator judges by this constant, never by that field, which nodes write)
//   renew_every      the holder renews its slots this often while its transaction runs
//   fresh_for        a slot whose last write the API server confirmed this recently (sent, by the
//                    holder's clock) may be trusted at the point of no return
//   claim_usable_for a slot the daemon's watch loop took is used by the next reconcile without
//                    another renewal only this long after the take
//   free_after       the coordinator revokes a slot it has not seen change for this long (plus its
//                    committing allowance: slot_lease.hpp), and forgets a grant nobody took
//   revoked_for      and deletes it (hands it on) this long after it saw its revoke: longer than
//                    any trust a node's read of the grant from before the revoke gave
//
// The bound holds because renew_every < fresh_for < revoked_for: a holder renews at least once in
// the window it trusts; a renewal is its write on its own Node and then a read of the grant that
// finds it unrevoked, so the read came before any revoke, and the window (counted from the write,
// which came before the read) ends before the coordinator hands the slot on (slot_hold.hpp). A
// claim is trusted for no longer than a confirmed renewal.
#pragma once

#include <chrono>

namespace shimkeeper::cluster::model::slot_timing {

inline constexpr std::chrono::seconds lease{15};
inline constexpr std::chrono::milliseconds renew_every = lease / 3;
inline constexpr std::chrono::milliseconds fresh_for = lease * 2 / 3;
inline constexpr std::chrono::milliseconds claim_usable_for = lease / 3;
inline constexpr std::chrono::seconds free_after = lease;
inline constexpr std::chrono::milliseconds revoked_for = fresh_for + std::chrono::seconds(1);

static_assert(renew_every < fresh_for && fresh_for < revoked_for && fresh_for < free_after,
              "a holder must renew inside the window it trusts, which must end before a free");
static_assert(claim_usable_for <= fresh_for, "a claim is trusted no longer than a confirmed write");

} // namespace shimkeeper::cluster::model::slot_timing
