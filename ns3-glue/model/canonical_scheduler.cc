// hysim: CanonicalScheduler, see canonical_scheduler.h.
#include "canonical_scheduler.h"

#include "hysim/fabric_interrupt.h"

#include <ns3/log.h>

#include <unistd.h>

#include <limits>
#include <utility>

namespace hysim
{

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

namespace
{
// hs_fabric_set_interrupt's hook: ns-3's Run() loops while IsEmpty() is false,
// so answering "empty" once is how a hook that fired ends the run early.
hs_fabric_interrupt_fn g_interrupt_fn = nullptr;
void* g_interrupt_ctx = nullptr;
pid_t g_interrupt_pid = 0; // the process that set it: never a forked worker
unsigned g_interrupt_countdown = HS_FABRIC_INTERRUPT_EVERY;

bool
Interrupted()
{
    if (g_interrupt_fn == nullptr || --g_interrupt_countdown != 0)
        return false;
    g_interrupt_countdown = HS_FABRIC_INTERRUPT_EVERY;
    return getpid() == g_interrupt_pid && g_interrupt_fn(g_interrupt_ctx) != 0;
}
} // namespace

bool
CanonicalScheduler::IsEmpty() const
{
    return m_heap.empty() || Interrupted();
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
    PopTop();
    PurgeTop();
    return ev;
}

// The fabric removes its step-limit event after every step that ends on a
// completion, so removal must not search the heap: a removed event stays in it,
// named in m_removed, until it reaches the top or the heap is compacted. ns-3
// frees its EventImpl at once, so a removed entry's impl is never touched. The
// order of live events is total (uid last), so where they sit in the heap never
// changes which runs next.
void
CanonicalScheduler::Remove(const Event& ev)
{
    if (m_heap.empty())
        return;
    if (m_heap.front().ev.key.m_uid == ev.key.m_uid)
    {
        PopTop();
        PurgeTop();
        return;
    }
    m_removed.insert(ev.key.m_uid);
    if (m_removed.size() > m_heap.size() / 2)
        Compact();
}

void
CanonicalScheduler::PopTop()
{
    m_heap.front() = m_heap.back();
    m_heap.pop_back();
    if (!m_heap.empty())
        SiftDown(0);
}

// Keeps the invariant that the top is live, so PeekNext and IsEmpty need no check.
void
CanonicalScheduler::PurgeTop()
{
    while (!m_removed.empty() && !m_heap.empty() &&
           m_removed.erase(m_heap.front().ev.key.m_uid) != 0)
        PopTop();
}

// Drops every removed entry and rebuilds the heap (bottom-up, O(n)); run when
// they are more than half the heap, so removal stays O(1) amortised.
void
CanonicalScheduler::Compact()
{
    size_t n = 0;
    for (const Entry& e : m_heap)
    {
        if (m_removed.count(e.ev.key.m_uid) == 0)
            m_heap[n++] = e;
    }
    m_heap.resize(n);
    m_removed.clear();
    for (size_t i = n / 2; i-- > 0;)
        SiftDown(i);
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

extern "C" void
hs_fabric_set_interrupt(hs_fabric_interrupt_fn fn, void* ctx)
{
    hysim::g_interrupt_fn = fn;
    hysim::g_interrupt_ctx = ctx;
    hysim::g_interrupt_pid = getpid();
    hysim::g_interrupt_countdown = HS_FABRIC_INTERRUPT_EVERY;
}
