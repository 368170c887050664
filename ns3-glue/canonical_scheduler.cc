// hysim: CanonicalScheduler, see canonical_scheduler.h.
#include "canonical_scheduler.h"

#include <ns3/log.h>

#include <limits>
#include <utility>

namespace hysim {

NS_OBJECT_ENSURE_REGISTERED(CanonicalScheduler);

ns3::TypeId
CanonicalScheduler::GetTypeId()
{
    static ns3::TypeId tid = ns3::TypeId("hysim::CanonicalScheduler")
                                 .SetParent<ns3::Scheduler>()
                                 .SetGroupName("hysim")
                                 .AddConstructor<CanonicalScheduler>();
    return tid;
}

CanonicalScheduler::CanonicalScheduler() = default;
CanonicalScheduler::~CanonicalScheduler() = default;

void
CanonicalScheduler::Insert(const Event& ev)
{
    Entry e;
    e.ts = ev.key.m_ts;
    e.ev = ev;
    if (auto* c = dynamic_cast<CanonicalEvent*>(ev.impl))
    {
        e.k0 = c->k0;
        e.k1 = c->k1;
        e.k2 = c->k2;
    }
    else
    {
        // Foreign events: after every canonical event of the same time, by uid.
        e.k0 = e.k1 = e.k2 = std::numeric_limits<uint64_t>::max();
    }
    m_heap.push_back(e);
    SiftUp(m_heap.size() - 1);
}

bool
CanonicalScheduler::IsEmpty() const
{
    return m_heap.empty();
}

ns3::Scheduler::Event
CanonicalScheduler::PeekNext() const
{
    return m_heap.front().ev;
}

ns3::Scheduler::Event
CanonicalScheduler::RemoveNext()
{
    Event ev = m_heap.front().ev;
    m_heap.front() = m_heap.back();
    m_heap.pop_back();
    if (!m_heap.empty())
        SiftDown(0);
    return ev;
}

void
CanonicalScheduler::Remove(const Event& ev)
{
    // Rare (only the fabric's step-limit event is ever removed): linear search.
    for (size_t i = 0; i < m_heap.size(); i++)
    {
        if (m_heap[i].ev.key.m_uid == ev.key.m_uid && m_heap[i].ev.impl == ev.impl)
        {
            m_heap[i] = m_heap.back();
            m_heap.pop_back();
            if (i < m_heap.size())
            {
                SiftUp(i);
                SiftDown(i);
            }
            return;
        }
    }
}

void
CanonicalScheduler::SiftUp(size_t i)
{
    Entry e = m_heap[i];
    while (i > 0)
    {
        size_t p = (i - 1) / 2;
        if (!Less(e, m_heap[p]))
            break;
        m_heap[i] = m_heap[p];
        i = p;
    }
    m_heap[i] = e;
}

void
CanonicalScheduler::SiftDown(size_t i)
{
    size_t n = m_heap.size();
    Entry e = m_heap[i];
    for (;;)
    {
        size_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && Less(m_heap[c + 1], m_heap[c]))
            c++;
        if (!Less(m_heap[c], e))
            break;
        m_heap[i] = m_heap[c];
        i = c;
    }
    m_heap[i] = e;
}

} // namespace hysim
