// hysim: an ns-3 scheduler that orders equal-time events by a canonical key.
//
// ns-3's own schedulers break timestamp ties by insertion order (the event
// uid), so a model's results depend on *when* (in wall-clock terms) each flow
// was handed over. CanonicalScheduler instead orders events by
//   (timestamp, k0, k1, k2, uid)
// where k0..k2 are set by whoever creates the event (a CanonicalEvent). The
// model gives every pending event a distinct (timestamp, k0, k1, k2), so the
// uid never decides anything for its own events; events that are not
// CanonicalEvents (none in hysim) sort after all canonical ones at equal time,
// in uid order.
//
// Remove (ns-3's Simulator::Remove) is lazy and O(1) amortised: the fabric
// removes its step-limit event after every step, so it must not search.
#ifndef HYSIM_NS3GLUE_CANONICAL_SCHEDULER_H
#define HYSIM_NS3GLUE_CANONICAL_SCHEDULER_H

#include <ns3/event-impl.h>
#include <ns3/scheduler.h>

#include <cstdint>
#include <unordered_set>
#include <vector>

namespace hysim
{

// An event carrying its canonical tie-break key (compared lexicographically).
class CanonicalEvent : public ns3::EventImpl
{
public:
    uint64_t k0 = 0, k1 = 0, k2 = 0;
};

class CanonicalScheduler : public ns3::Scheduler
{
public:
    static ns3::TypeId GetTypeId();

    CanonicalScheduler();
    ~CanonicalScheduler() override;

    void Insert(const Event& ev) override;
    bool IsEmpty() const override;
    Event PeekNext() const override;
    Event RemoveNext() override;
    void Remove(const Event& ev) override;

private:
    struct Entry
    {
        uint64_t ts, k0, k1, k2;
        Event ev;
    };
    static bool
    Less(const Entry& a, const Entry& b)
    {
        if (a.ts != b.ts)
            return a.ts < b.ts;
        if (a.k0 != b.k0)
            return a.k0 < b.k0;
        if (a.k1 != b.k1)
            return a.k1 < b.k1;
        if (a.k2 != b.k2)
            return a.k2 < b.k2;
        return a.ev.key.m_uid < b.ev.key.m_uid;
    }
    void PopTop();
    void PurgeTop();
    void Compact();
    void SiftUp(size_t i);
    void SiftDown(size_t i);

    std::vector<Entry> m_heap;              // binary min-heap; its top is never a removed event
    std::unordered_set<uint32_t> m_removed; // uids of removed events still in m_heap
};

} // namespace hysim

#endif
