// The coordinator reads the fault switch that breaks its slot reclaim on purpose and hands the
// model the wait it stands for: cluster/model/ reads no switch.
#pragma once

#include "shimkeeper/cluster/model/slot_lease.hpp"
#include "shimkeeper/reconcile/fault.hpp"

namespace shimkeeper::cluster::coordinator {

// Half a lease with the fault switch slot-reclaim-early of fault-injection builds, else the wait
// promised (model::slot_reclaim_after).
inline model::SlotReclaimWait slot_reclaim_wait() {
    return reconcile::fault_switch("slot-reclaim-early") ? model::SlotReclaimWait::half_lease
                                                         : model::SlotReclaimWait::promised;
}

} // namespace shimkeeper::cluster::coordinator
