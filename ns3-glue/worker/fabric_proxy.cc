// hysim fabric: the owner side of worker mode. A worker-mode hs_fabric holds
// a WorkerProxy; the C ABI calls in fabric.cc forward to the Proxy* functions
// here, which talk to the worker (fabric_worker.cc, messages in
// fabric_wire.h). The proxy keeps the log of flows handed over, in the order
// the current history received them, and the completions it reported: that is
// what a rollback replays and withdraws.
//
// Flows travel in batches: hs_fabric_add_flow checks a flow here (everything
// the model would check) and only logs it; the flows not yet handed over go to
// the worker in one message before the next request that needs them (a step,
// the safe time, link statistics). A rollback is deferred the same way: the
// proxy picks the checkpoint, withdraws the completions and answers now() at
// once, and resumes the checkpoint only then, handing it every flow logged
// after it in one message; several late flows before the next step cost one
// resume (of the checkpoint the earliest of them needs). The model sees the
// same calls in the same order as with one message per flow and a rollback
// per late flow, so results are unchanged.
//
// Link samples (hs_fabric_sample_links) arrive from the worker as it takes
// them, possibly ahead of the safe time, where a rollback may still change
// them: the proxy holds them and calls the caller's function only for those
// at or before the safe time (a flow starting at s changes no sample at t <=
// s), in time order, once each. A rollback drops the held samples taken after
// its checkpoint; the resumed history sends them again, and skips none: the
// proxy ignores those it has delivered already. hs_fabric_set_safe_time only
// records the time (and delivers what it releases); the worker hears of it
// with the next step, and prunes its checkpoints then.
//
// Link statistics come in one request for every link, kept until the next
// request that may change the model: a caller that reads every link (the
// statistics files, once per sample) costs one round trip, not one per link.
#include "fabric_internal.h"
#include "fabric_proxy.h"
#include "fabric_wire.h"

#include <cerrno>
#include <cinttypes>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <deque>
#include <unordered_set>
#include <vector>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace hysim_fab
{

namespace
{

constexpr uint64_t kDefaultIntervalPs = 100ull * 1000 * 1000; // 100 us
constexpr uint32_t kDefaultMaxCheckpoints = 16;

bool g_force_local = false; // hs_fabric_create_opts without worker: ignore the environment

} // namespace

struct WorkerProxy
{
    using LoggedFlow = WireFlow;
    struct Sample
    {
        uint64_t t_ps;
        std::vector<hs_fabric_link_sample> links;
    };

    pid_t hub = -1;
    int cmd = -1;  // SOCK_SEQPACKET to the worker
    int ctrl = -1; // pipe to the hub: closing it ends every worker process
    uint32_t ngpus = 0;
    WireRep rep;                 // the last reply: time, stats, checkpoint table
    std::vector<LoggedFlow> log; // log[0 .. sent-1] are in the worker's history
    size_t sent = 0;
    size_t replay_end = 0;       // log[sent .. replay_end-1] were in the history a rollback undid
    bool resume_pending = false; // a rollback chosen, not yet sent
    WireCheckpoint resume{};     // the checkpoint it resumes
    uint64_t undone = 0;         // completions it withdrew (rep.stats counts them done)
    std::unordered_set<uint64_t> ids;
    std::vector<hs_flow_done> reported; // completions standing, in report order
    std::deque<hs_flow_done> revisions; // withdrawn, not yet returned
    uint64_t safe_ps = 0;
    uint64_t max_ckpt_id = 0;
    uint64_t generation = 0;
    uint64_t replayed = 0;
    uint64_t replay_messages = 0; // batches that carried replayed flows
    uint64_t flow_messages = 0;   // batches sent
    bool safe_unsent = false;     // safe_ps grew since the worker last heard it
    // Link sampling: off while fn is null.
    hs_fabric_sample_fn sample_fn = nullptr;
    void* sample_ctx = nullptr;
    std::deque<Sample> held;   // received, not delivered, in time order
    Sample incoming;           // a sample whose parts are still arriving
    uint64_t delivered_ps = 0; // the last sample delivered (0: none)
    bool delivering = false;
    std::vector<unsigned char> rx;           // one message from the worker
    std::vector<hs_fabric_link_stats> links; // every link, as the worker last sent them
    bool links_valid = false;                // no request since that may have changed them
    char dead[512] = ""; // set once the worker is lost: every later call fails with it

    // One request, one reply. false (and dead set, unless the worker replied an error).
    bool Call(const WireReq& rq, char* err, size_t errlen);
    // As Call, for a request followed by count flow records in the same message.
    bool CallWith(const WireReq& rq, const WireFlow* flows, size_t count, char* err, size_t errlen);
    // Hands the worker every logged flow it does not have yet.
    bool Flush(char* err, size_t errlen);
    // Reads messages up to the reply to the request just sent, keeping the samples before it.
    bool Receive();
    void TakeSamplePart(size_t len);
    void TakeLinksPart(size_t len);
    // Calls the sampling function for the held samples at or before the safe time.
    void Deliver();
};

namespace
{

void
NoteCheckpoints(WorkerProxy& p)
{
    for (uint32_t i = 0; i < p.rep.nckpt; i++)
        if (p.rep.ckpt[i].id > p.max_ckpt_id)
            p.max_ckpt_id = p.rep.ckpt[i].id;
}

} // namespace

bool
WorkerProxy::Call(const WireReq& rq, char* err, size_t errlen)
{
    return CallWith(rq, nullptr, 0, err, errlen);
}

bool
WorkerProxy::CallWith(const WireReq& rq, const WireFlow* flows, size_t count, char* err,
                      size_t errlen)
{
    if (dead[0] != '\0')
    {
        SetErr(err, errlen, "%s", dead);
        return false;
    }
    links_valid = links_valid && rq.op == kOpLinkStats;
    iovec iov[2] = {{const_cast<WireReq*>(&rq), sizeof rq},
                    {const_cast<WireFlow*>(flows), count * sizeof(WireFlow)}};
    msghdr mh{};
    mh.msg_iov = iov;
    mh.msg_iovlen = count > 0 ? 2 : 1;
    const ssize_t want = static_cast<ssize_t>(sizeof rq + count * sizeof(WireFlow));
    if (sendmsg(cmd, &mh, MSG_NOSIGNAL) != want)
    {
        snprintf(dead, sizeof dead, "fabric: the worker process is gone (send: %s)",
                 strerror(errno));
        SetErr(err, errlen, "%s", dead);
        return false;
    }
    if (!Receive())
    {
        SetErr(err, errlen, "%s", dead);
        return false;
    }
    NoteCheckpoints(*this);
    if (rep.rc < 0)
    {
        SetErr(err, errlen, "%s", rep.err);
        return false;
    }
    return true;
}

bool
WorkerProxy::Receive()
{
    if (rx.empty()) // the largest message the worker sends
        rx.resize(
            std::max({sizeof(WireRep),
                      sizeof(WireSampleHdr) + kWireMaxSampleLinks * sizeof(hs_fabric_link_sample),
                      sizeof(WireLinksHdr) + kWireMaxLinkStats * sizeof(hs_fabric_link_stats)}));
    for (;;)
    {
        ssize_t n;
        do
            n = recv(cmd, rx.data(), rx.size(), 0);
        while (n < 0 && errno == EINTR);
        uint32_t magic = 0;
        if (n >= static_cast<ssize_t>(sizeof magic))
            memcpy(&magic, rx.data(), sizeof magic);
        if (magic == kWireSampleMagic || magic == kWireLinksMagic)
        {
            if (magic == kWireSampleMagic)
                TakeSamplePart(static_cast<size_t>(n));
            else
                TakeLinksPart(static_cast<size_t>(n));
            if (dead[0] != '\0')
                return false;
            continue;
        }
        if (n != static_cast<ssize_t>(sizeof rep))
        {
            snprintf(dead, sizeof dead, "fabric: the worker process died (pid %" PRId64 ")",
                     rep.pid);
            return false;
        }
        memcpy(&rep, rx.data(), sizeof rep);
        return true;
    }
}

namespace
{

// Reads the header of one of the messages a record set arrives in (fabric_worker.cc,
// SendInParts); false unless it holds the part that follows the `have` records received.
template <typename Hdr, typename Rec>
bool
ReadPart(const std::vector<unsigned char>& rx, size_t len, uint32_t per, size_t have, Hdr* h)
{
    if (len < sizeof *h)
        return false;
    memcpy(h, rx.data(), sizeof *h);
    return h->count <= per && len == sizeof *h + h->count * sizeof(Rec) &&
           h->first == (h->first == 0 ? 0 : have) && h->first + h->count <= h->total;
}

} // namespace

// One message of a sample. A complete sample is held, unless it was delivered
// before a rollback (the resumed history sends it again: the same counters).
void
WorkerProxy::TakeSamplePart(size_t len)
{
    WireSampleHdr h;
    if (!ReadPart<WireSampleHdr, hs_fabric_link_sample>(rx, len, kWireMaxSampleLinks,
                                                        incoming.links.size(), &h))
    {
        snprintf(dead, sizeof dead, "fabric: a bad link sample from the worker (pid %" PRId64 ")",
                 rep.pid);
        return;
    }
    if (h.first == 0)
    {
        incoming.t_ps = h.t_ps;
        incoming.links.clear();
    }
    const auto* recs = reinterpret_cast<const hs_fabric_link_sample*>(rx.data() + sizeof h);
    incoming.links.insert(incoming.links.end(), recs, recs + h.count);
    if (incoming.links.size() < h.total)
        return;
    if (incoming.t_ps <= delivered_ps)
        return;
    while (!held.empty() && held.back().t_ps >= incoming.t_ps)
        held.pop_back();
    held.push_back(std::move(incoming));
    incoming = Sample{};
}

void
WorkerProxy::TakeLinksPart(size_t len)
{
    WireLinksHdr h;
    if (!ReadPart<WireLinksHdr, hs_fabric_link_stats>(rx, len, kWireMaxLinkStats, links.size(), &h))
    {
        snprintf(dead, sizeof dead, "fabric: bad link statistics from the worker (pid %" PRId64 ")",
                 rep.pid);
        return;
    }
    if (h.first == 0)
        links.clear();
    const auto* recs = reinterpret_cast<const hs_fabric_link_stats*>(rx.data() + sizeof h);
    links.insert(links.end(), recs, recs + h.count);
}

void
WorkerProxy::Deliver()
{
    if (delivering || sample_fn == nullptr)
        return;
    delivering = true;
    while (!held.empty() && held.front().t_ps <= safe_ps)
    {
        // Taken off first: the function may call into the fabric, which may receive more.
        Sample s = std::move(held.front());
        held.pop_front();
        delivered_ps = s.t_ps;
        sample_fn(sample_ctx, s.t_ps, s.links.data(), s.links.size());
    }
    delivering = false;
}

bool
WorkerProxy::Flush(char* err, size_t errlen)
{
    if (resume_pending)
    {
        WireReq rq;
        rq.op = kOpRollback;
        rq.a[0] = resume.id;
        rq.a[1] = max_ckpt_id + 1;
        if (!Call(rq, err, errlen))
        {
            if (dead[0] == '\0')
                snprintf(dead, sizeof dead, "fabric: a rollback failed: %s", rep.err);
            return false;
        }
        // That reply came from the history it ended; the next (there is a late flow to send) from the resumed one.
        resume_pending = false;
        undone = 0;
    }
    while (sent < log.size())
    {
        const size_t n = std::min<size_t>(log.size() - sent, kWireMaxBatch);
        WireReq rq;
        rq.op = kOpAddBatch;
        rq.a[0] = n;
        const bool replay = sent < replay_end;
        if (!CallWith(rq, &log[sent], n, err, errlen))
        {
            // Every flow was checked when it was added: the histories now differ.
            if (dead[0] == '\0')
                snprintf(dead, sizeof dead, "fabric: handing %zu flows to the worker failed: %s", n,
                         rep.err);
            return false;
        }
        flow_messages++;
        replay_messages += replay;
        sent += n;
    }
    return true;
}

bool
ProxyWanted()
{
    const char* w = getenv("HYSIM_FABRIC_WORKER");
    return !g_force_local && w != nullptr && strcmp(w, "1") == 0;
}

hs_fabric*
ProxyCreate(const hs_scenario* sc, const hs_fabric_options* o, char* err, size_t errlen)
{
    WireConfig cfg{};
    // Options first, then the scenario's run.checkpoint_* keys, then the defaults.
    const double sc_us = sc->run.checkpoint_interval_us;
    cfg.interval_ps = o != nullptr && o->checkpoint_interval_ps != 0 ? o->checkpoint_interval_ps
                      : sc_us >= 1e-6 ? static_cast<uint64_t>(std::llround(sc_us * 1e6))
                                      : kDefaultIntervalPs;
    cfg.max_checkpoints = o != nullptr && o->checkpoints_max != 0 ? o->checkpoints_max
                          : sc->run.checkpoints_max != 0          ? sc->run.checkpoints_max
                                                                  : kDefaultMaxCheckpoints;
    if (cfg.max_checkpoints > kWireMaxCheckpoints)
    {
        SetErr(err, errlen, "fabric: checkpoints_max %u is above the limit of %u",
               cfg.max_checkpoints, kWireMaxCheckpoints);
        return nullptr;
    }
    cfg.owner_pid = getpid();
    int sv[2], pp[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    {
        SetErr(err, errlen, "fabric: socketpair for the worker: %s", strerror(errno));
        return nullptr;
    }
    if (pipe2(pp, O_CLOEXEC) != 0)
    {
        SetErr(err, errlen, "fabric: pipe for the worker: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        return nullptr;
    }
    fflush(nullptr);
    const pid_t hub = fork();
    if (hub < 0)
    {
        SetErr(err, errlen, "fabric: fork of the worker process failed: %s", strerror(errno));
        close(sv[0]);
        close(sv[1]);
        close(pp[0]);
        close(pp[1]);
        return nullptr;
    }
    if (hub == 0)
    {
        close(sv[0]);
        close(pp[1]);
        WorkerHubMain(sc, cfg, sv[1], pp[0]);
    }
    close(sv[1]);
    close(pp[0]);
    auto* p = new WorkerProxy;
    p->hub = hub;
    p->cmd = sv[0];
    p->ctrl = pp[1];
    p->ngpus = sc->servers.count * sc->servers.gpus_per_server;
    auto* f = new hs_fabric;
    f->remote = p;
    // The worker's first message says whether it built the model.
    ssize_t n;
    do
        n = recv(p->cmd, &p->rep, sizeof p->rep, 0);
    while (n < 0 && errno == EINTR);
    if (n != static_cast<ssize_t>(sizeof p->rep) || p->rep.rc < 0)
    {
        if (n == static_cast<ssize_t>(sizeof p->rep))
            SetErr(err, errlen, "%s", p->rep.err);
        else
            SetErr(err, errlen, "fabric: the worker process died while starting");
        ProxyDestroy(f);
        return nullptr;
    }
    NoteCheckpoints(*p);
    return f;
}

namespace
{

// Chooses the newest checkpoint at or before start to resume (at the next
// flush, with the flows logged after it) and withdraws the completions
// reported from then on.
int
Rollback(WorkerProxy& p, uint64_t id, uint64_t start, char* err, size_t errlen)
{
    const WireCheckpoint* ck = nullptr;
    for (uint32_t i = 0; i < p.rep.nckpt; i++)
        if (p.rep.ckpt[i].time_ps <= start)
            ck = &p.rep.ckpt[i];
    if (ck == nullptr)
    {
        SetErr(err, errlen,
               "fabric: flow %" PRIu64 ": start %" PRIu64
               " ps is before the oldest checkpoint (%" PRIu64 " ps): cannot roll back",
               id, start, p.rep.nckpt > 0 ? p.rep.ckpt[0].time_ps : p.rep.now_ps);
        return -1;
    }
    const WireCheckpoint target = *ck;
    p.resume = target;
    p.resume_pending = true;
    while (!p.reported.empty() && p.reported.back().finish_ps >= target.time_ps)
    {
        p.revisions.push_front(p.reported.back());
        p.reported.pop_back();
        p.undone++;
    }
    p.generation++;
    // Samples taken after the checkpoint: the resumed history takes them again.
    while (!p.held.empty() && p.held.back().t_ps > target.sampled_ps)
        p.held.pop_back();
    p.incoming.links.clear();
    // The resumed history holds the first target.nflows flows; the rest go
    // with the late flow at the next flush, in one message.
    p.replayed += p.sent - target.nflows;
    p.replay_end = std::max(p.replay_end, p.sent);
    p.sent = target.nflows;
    return 0;
}

} // namespace

int
ProxyAddFlow(hs_fabric* f, uint64_t id, uint32_t src, uint32_t dst, uint64_t bytes, uint64_t start,
             char* err, size_t errlen)
{
    WorkerProxy& p = *f->remote;
    if (p.dead[0] != '\0')
    {
        SetErr(err, errlen, "%s", p.dead);
        return -1;
    }
    // Checked here too, so a bad late flow fails before anything is rolled back.
    if (src >= p.ngpus || dst >= p.ngpus || src == dst || bytes == 0 || p.ids.count(id) != 0)
    {
        SetErr(err, errlen, "fabric: flow %" PRIu64 ": %s", id,
               p.ids.count(id) != 0 ? "duplicate flow id"
               : bytes == 0         ? "zero bytes"
                                    : "bad source or destination GPU");
        return -1;
    }
    if (start < p.safe_ps)
    {
        SetErr(err, errlen,
               "fabric: flow %" PRIu64 ": start %" PRIu64 " ps is before the safe time %" PRIu64
               " ps",
               id, start, p.safe_ps);
        return -1;
    }
    if (start < ProxyNow(f) && Rollback(p, id, start, err, errlen) != 0)
        return -1;
    p.log.push_back({id, src, dst, bytes, start});
    p.ids.insert(id);
    p.links_valid = false; // read after the flow reaches the worker (a late one rolls it back)
    return 0;
}

int
ProxyNextCompletion(hs_fabric* f, uint64_t limit_ps, hs_flow_done* done)
{
    WorkerProxy& p = *f->remote;
    WireReq rq;
    rq.op = kOpNext;
    rq.a[0] = limit_ps;
    rq.a[1] = p.safe_ps;
    char err[512];
    if (!p.Flush(err, sizeof err) || !p.Call(rq, err, sizeof err))
    {
        fprintf(stderr, "%s\n", err);
        return 0;
    }
    p.safe_unsent = false;
    const bool got = p.rep.rc == 1;
    const hs_flow_done d = p.rep.done;
    if (got)
        p.reported.push_back(d);
    p.Deliver(); // last: the sampling function may call the fabric, which replaces p.rep
    if (got && done != nullptr)
        *done = d;
    return got ? 1 : 0;
}

uint64_t
ProxyNow(const hs_fabric* f)
{
    const WorkerProxy& p = *f->remote;
    return p.resume_pending ? p.resume.time_ps : p.rep.now_ps;
}

void
ProxyStats(const hs_fabric* f, hs_fabric_stats* out)
{
    const WorkerProxy& p = *f->remote;
    *out = p.rep.stats;
    out->flows_added += p.log.size() - p.sent; // checked, so the worker will add them
    if (p.resume_pending) // the resumed history had neither the replayed flows nor the withdrawn completions
    {
        out->flows_added -= p.replay_end - p.sent;
        out->flows_done -= p.undone;
    }
}

size_t
ProxyLinkCount(const hs_fabric* f)
{
    return f->remote->rep.link_count;
}

int
ProxyLinkStats(const hs_fabric* f, size_t i, hs_fabric_link_stats* out)
{
    WorkerProxy& p = *f->remote;
    WireReq rq;
    rq.op = kOpLinkStats;
    char err[512];
    if (!p.links_valid)
    {
        p.links.clear();
        if (!p.Flush(err, sizeof err) || !p.Call(rq, err, sizeof err))
            return -1;
        p.links_valid = true;
    }
    if (i >= p.links.size())
        return -1;
    *out = p.links[i];
    return 0;
}

int
ProxySampleLinks(hs_fabric* f, uint64_t interval_ps, hs_fabric_sample_fn fn, void* ctx, char* err,
                 size_t errlen)
{
    WorkerProxy& p = *f->remote;
    if (!p.log.empty())
    {
        SetErr(err, errlen, "fabric: link sampling must be enabled before the first flow is added");
        return -1;
    }
    WireReq rq;
    rq.op = kOpSample;
    rq.a[0] = interval_ps;
    if (!p.Flush(err, errlen) || !p.Call(rq, err, errlen))
        return -1;
    p.sample_fn = fn;
    p.sample_ctx = ctx;
    return 0;
}

void
ProxyDestroy(hs_fabric* f)
{
    WorkerProxy* p = f->remote;
    // Closing both channels ends the worker (end of file) and makes the hub kill
    // and reap every checkpoint before it exits.
    close(p->cmd);
    close(p->ctrl);
    while (waitpid(p->hub, nullptr, 0) < 0 && errno == EINTR)
    {
    }
    delete p;
    f->remote = nullptr;
    delete f;
}

} // namespace hysim_fab

using namespace hysim_fab;

extern "C"
{

    hs_fabric*
    hs_fabric_create_opts(const hs_scenario* sc, const hs_fabric_options* opts, char* err,
                          size_t errlen)
    {
        if (sc == nullptr)
        {
            SetErr(err, errlen, "fabric: no scenario");
            return nullptr;
        }
        if (opts != nullptr && opts->worker)
            return ProxyCreate(sc, opts, err, errlen);
        g_force_local = true;
        hs_fabric* f = hs_fabric_create(sc, err, errlen);
        g_force_local = false;
        return f;
    }

    int
    hs_fabric_set_safe_time(hs_fabric* f, uint64_t safe_ps, char* err, size_t errlen)
    {
        if (f == nullptr || f->remote == nullptr)
            return 0;
        WorkerProxy& p = *f->remote;
        if (p.dead[0] != '\0')
        {
            SetErr(err, errlen, "%s", p.dead);
            return -1;
        }
        if (safe_ps <= p.safe_ps)
            return 0;
        p.safe_ps = safe_ps;
        p.safe_unsent = true;
        p.Deliver();
        return 0;
    }

    int
    hs_fabric_next_revision(hs_fabric* f, hs_flow_done* withdrawn)
    {
        if (f == nullptr || f->remote == nullptr || f->remote->revisions.empty())
            return 0;
        if (withdrawn != nullptr)
            *withdrawn = f->remote->revisions.front();
        f->remote->revisions.pop_front();
        return 1;
    }

    uint64_t
    hs_fabric_generation(const hs_fabric* f)
    {
        return f == nullptr || f->remote == nullptr ? 0 : f->remote->generation;
    }

    void
    hs_fabric_get_checkpoint_stats(const hs_fabric* f, hs_fabric_checkpoint_stats* out)
    {
        if (out == nullptr)
            return;
        memset(out, 0, sizeof *out);
        if (f == nullptr || f->remote == nullptr)
            return;
        WorkerProxy& p = *f->remote;
        char err[512];
        if (p.resume_pending &&
            !p.Flush(err, sizeof err)) // the checkpoint table after the rollback
            fprintf(stderr, "%s\n", err);
        if (p.safe_unsent) // and after the safe time's pruning
        {
            WireReq rq;
            rq.op = kOpSafe;
            rq.a[0] = p.safe_ps;
            if (p.Flush(err, sizeof err) && p.Call(rq, err, sizeof err))
                p.safe_unsent = false;
            else
                fprintf(stderr, "%s\n", err);
        }
        out->taken = p.max_ckpt_id;
        out->live = p.rep.nckpt;
        out->oldest_ps = p.rep.nckpt > 0 ? p.rep.ckpt[0].time_ps : 0;
        out->rollbacks = p.generation;
        out->replayed_flows = p.replayed;
        out->replay_messages = p.replay_messages;
        out->flow_messages = p.flow_messages;
        out->worker_pid = static_cast<uint64_t>(p.rep.pid);
    }

} // extern "C"
