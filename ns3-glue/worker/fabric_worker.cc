// hysim fabric: the worker side of worker mode (fabric_wire.h). Processes:
//
//   owner ── hub ─┬─ worker        (runs ns-3, serves the owner's requests)
//                 ├─ checkpoint 1  (a paused fork of the worker at time t1)
//                 └─ checkpoint 2 ...
//
// The hub builds nothing: it is a child subreaper whose only jobs are to
// parent every other process (so each can die with it through
// PR_SET_PDEATHSIG), reap them, and kill them all when the owner closes the
// control pipe. It dies with the owner (PR_SET_PDEATHSIG), so nothing outlives
// the owner. A checkpoint is forked through a short-lived middle process so
// that it is re-parented to the hub (not to the worker, which a rollback
// ends); only then does it arm its death signal.
//
// Rollback: the worker hands the owner's command socket to the checkpoint to
// resume (SCM_RIGHTS), kills the checkpoints newer than it, replies and exits;
// the resumed copy first forks a fresh checkpoint of itself (same time) and
// then serves. Checkpoints do not hold the command socket, so when the worker
// dies the owner reads end-of-file instead of waiting forever.
//
// Link samples are sent to the owner as the model takes them (before the
// reply to the request being handled); each checkpoint records the time of
// the last one sent before it, so that the owner knows, after a rollback,
// which of those it received the resumed history will send again.
#include "fabric_wire.h"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <vector>

#include <dirent.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace hysim_fab
{
namespace
{

struct Checkpoint
{
    uint64_t id;
    uint64_t time_ps;
    uint64_t nflows;
    uint64_t sampled_ps;
    pid_t pid;
    int fd; // our end of its resume channel
};

// The worker's state: one model per process, so plain globals.
hs_fabric* g_fab = nullptr;
int g_cmd = -1;
pid_t g_hub = 0;
WireConfig g_cfg{};
std::vector<Checkpoint> g_ckpts; // oldest first
uint64_t g_next_id = 1;
uint64_t g_nflows = 0;    // flows handed over in this history
uint64_t g_next_ckpt = 0; // time of the next checkpoint
uint64_t g_safe_ps = 0;
WireRep g_rep;             // static: frames stay small across nested resumes
uint64_t g_fault_fork = 0; // HYSIM_FAULT_FORK=N (tests): the Nth checkpoint fork fails
uint64_t g_forks = 0;      // checkpoint forks tried in this history
uint64_t g_sampled_ps = 0; // the last link sample sent in this history (0: none)
// One request as received; static for the same reason as g_rep. Aligned for WireFlow.
alignas(8) unsigned char g_rx[sizeof(WireReq) + kWireMaxBatch * sizeof(WireFlow)];

[[noreturn]] void ServeLoop();

void
Drop(size_t i)
{
    kill(g_ckpts[i].pid, SIGKILL); // the hub reaps it
    close(g_ckpts[i].fd);
    g_ckpts.erase(g_ckpts.begin() + static_cast<long>(i));
}

// Drops what no rollback can need: beyond the count, and older than the
// newest checkpoint at or before the safe time.
void
Prune()
{
    while (g_ckpts.size() > g_cfg.max_checkpoints)
        Drop(0);
    while (g_ckpts.size() >= 2 && g_ckpts[1].time_ps <= g_safe_ps)
        Drop(0);
}

// Dies unless the hub (still alive) is our parent; then arms the death signal.
void
TieToHub()
{
    for (int i = 0; getppid() != g_hub; i++)
    {
        if (kill(g_hub, 0) != 0 || i > 200000)
            _exit(0);
        usleep(10);
    }
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != g_hub)
        _exit(0);
}

[[noreturn]] void
Park(int fd)
{
    if (g_cmd >= 0)
        close(g_cmd);
    g_cmd = -1;
    TieToHub();
    const int64_t me = getpid();
    if (send(fd, &me, sizeof me, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof me))
        _exit(0);
    WireResume rs;
    char cbuf[CMSG_SPACE(sizeof(int))];
    iovec iov{&rs, sizeof rs};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = cbuf;
    mh.msg_controllen = sizeof cbuf;
    ssize_t n;
    do
        n = recvmsg(fd, &mh, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    cmsghdr* cm = CMSG_FIRSTHDR(&mh);
    if (n != static_cast<ssize_t>(sizeof rs) || cm == nullptr || cm->cmsg_type != SCM_RIGHTS)
        _exit(0); // end of file: nobody can resume us any more
    memcpy(&g_cmd, CMSG_DATA(cm), sizeof g_cmd);
    close(fd);
    // Keep the older checkpoints that still exist; the rest died after our fork.
    std::vector<Checkpoint> keep;
    for (const Checkpoint& c : g_ckpts)
    {
        bool live = false;
        for (uint32_t i = 0; i < rs.nlive && i < kWireMaxCheckpoints; i++)
            live = live || rs.live[i] == c.id;
        if (live)
            keep.push_back(c);
        else
            close(c.fd);
    }
    g_ckpts = keep;
    g_next_id = rs.next_id;
    ServeLoop();
}

// Forks a paused copy of this worker at the current time. False with a message.
bool
TakeCheckpoint(char* err, size_t errlen)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) != 0)
    {
        snprintf(err, errlen, "fabric worker: checkpoint socketpair: %s", strerror(errno));
        return false;
    }
    fflush(nullptr);
    const bool fault = g_fault_fork != 0 && ++g_forks == g_fault_fork;
    const pid_t mid = fault ? -1 : fork();
    if (fault)
        errno = EAGAIN;
    if (mid < 0)
    {
        snprintf(err, errlen, "fabric worker: fork for a checkpoint failed: %s%s", strerror(errno),
                 fault ? " (HYSIM_FAULT_FORK)" : "");
        close(sv[0]);
        close(sv[1]);
        return false;
    }
    if (mid == 0)
    {
        const pid_t c = fork();
        if (c == 0)
        {
            close(sv[0]);
            Park(sv[1]);
        }
        _exit(c < 0 ? 1 : 0); // the checkpoint is re-parented to the hub
    }
    close(sv[1]);
    int st = 0;
    while (waitpid(mid, &st, 0) < 0 && errno == EINTR)
    {
    }
    int64_t pid = 0;
    ssize_t n = -1;
    if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
        n = recv(sv[0], &pid, sizeof pid, 0);
    if (n != static_cast<ssize_t>(sizeof pid))
    {
        snprintf(err, errlen, "fabric worker: a checkpoint could not be forked (%s)",
                 WIFEXITED(st) && WEXITSTATUS(st) != 0 ? "fork failed" : "it died at once");
        close(sv[0]);
        return false;
    }
    g_ckpts.push_back({g_next_id++, hs_fabric_now_ps(g_fab), g_nflows, g_sampled_ps,
                       static_cast<pid_t>(pid), sv[0]});
    Prune();
    return true;
}

void
FillReply(int rc)
{
    g_rep.rc = rc;
    g_rep.now_ps = hs_fabric_now_ps(g_fab);
    g_rep.pid = getpid();
    g_rep.link_count = hs_fabric_link_count(g_fab);
    hs_fabric_get_stats(g_fab, &g_rep.stats);
    g_rep.nckpt = static_cast<uint32_t>(g_ckpts.size());
    for (size_t i = 0; i < g_ckpts.size(); i++)
        g_rep.ckpt[i] = {g_ckpts[i].id, g_ckpts[i].time_ps, g_ckpts[i].nflows,
                         g_ckpts[i].sampled_ps};
}

void
Reply(int rc)
{
    FillReply(rc);
    if (send(g_cmd, &g_rep, sizeof g_rep, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof g_rep))
        _exit(0); // the owner is gone
}

uint64_t
NextBoundary(uint64_t now)
{
    return (now / g_cfg.interval_ps + 1) * g_cfg.interval_ps;
}

// next_completion, stopping at every checkpoint boundary on the way to fork one.
void
DoNext(uint64_t limit)
{
    for (;;)
    {
        const uint64_t now = hs_fabric_now_ps(g_fab);
        if (now == g_next_ckpt && now < limit)
        {
            if (!TakeCheckpoint(g_rep.err, sizeof g_rep.err))
                return Reply(-1);
            g_next_ckpt = NextBoundary(now);
        }
        // Idle (no flow in flight): nothing to checkpoint; run straight to the limit.
        const bool idle = hs_fabric_flows_in_flight(g_fab) == 0;
        const uint64_t step = idle || limit < g_next_ckpt ? limit : g_next_ckpt;
        const int rc = hs_fabric_next_completion(g_fab, step, &g_rep.done);
        if (hs_fabric_now_ps(g_fab) > g_next_ckpt)
            g_next_ckpt = NextBoundary(hs_fabric_now_ps(g_fab));
        if (rc == 1)
            return Reply(1);
        if (step == limit || hs_fabric_now_ps(g_fab) != g_next_ckpt)
            return Reply(0);
    }
}

// Sends n records to the owner in messages of a header h (count, first and
// total filled in here) and at most per records; at least one message.
template <typename Hdr, typename Rec>
void
SendInParts(Hdr h, const Rec* recs, size_t n, uint32_t per)
{
    size_t first = 0;
    do
    {
        h.count = static_cast<uint32_t>(std::min<size_t>(n - first, per));
        h.first = first;
        h.total = n;
        iovec iov[2] = {{&h, sizeof h}, {const_cast<Rec*>(recs + first), h.count * sizeof(Rec)}};
        msghdr mh{};
        mh.msg_iov = iov;
        mh.msg_iovlen = 2;
        const ssize_t want = static_cast<ssize_t>(sizeof h + h.count * sizeof(Rec));
        if (sendmsg(g_cmd, &mh, MSG_NOSIGNAL) != want)
            _exit(0); // the owner is gone
        first += h.count;
    } while (first < n);
}

// The model's sampler: the sample goes to the owner at once.
void
SendSample(void*, uint64_t t_ps, const hs_fabric_link_sample* links, size_t nlinks)
{
    WireSampleHdr h;
    h.t_ps = t_ps;
    SendInParts(h, links, nlinks, kWireMaxSampleLinks);
    g_sampled_ps = t_ps;
}

// Every link's statistics, then the reply.
void
DoLinkStats()
{
    static std::vector<hs_fabric_link_stats> all;
    all.resize(hs_fabric_link_count(g_fab));
    for (size_t i = 0; i < all.size(); i++)
        hs_fabric_get_link_stats(g_fab, i, &all[i]);
    SendInParts(WireLinksHdr{}, all.data(), all.size(), kWireMaxLinkStats);
    Reply(0);
}

// Turns sampling on, then replaces every checkpoint by one taken now: a
// rollback must resume a model that samples.
void
DoSample(uint64_t interval_ps)
{
    if (hs_fabric_sample_links(g_fab, interval_ps, SendSample, nullptr, g_rep.err,
                               sizeof g_rep.err) != 0)
        return Reply(-1);
    while (!g_ckpts.empty())
        Drop(g_ckpts.size() - 1);
    if (!TakeCheckpoint(g_rep.err, sizeof g_rep.err))
        return Reply(-1);
    g_next_ckpt = NextBoundary(hs_fabric_now_ps(g_fab));
    Reply(0);
}

void
SetSafe(uint64_t safe_ps)
{
    if (safe_ps > g_safe_ps)
        g_safe_ps = safe_ps;
    Prune();
}

void
DoRollback(uint64_t id, uint64_t next_id)
{
    size_t k = 0;
    while (k < g_ckpts.size() && g_ckpts[k].id != id)
        k++;
    if (k == g_ckpts.size())
    {
        snprintf(g_rep.err, sizeof g_rep.err, "fabric worker: no checkpoint %llu",
                 static_cast<unsigned long long>(id));
        return Reply(-1);
    }
    while (g_ckpts.size() > k + 1)
        Drop(g_ckpts.size() - 1);
    WireResume rs;
    rs.next_id = next_id;
    for (size_t i = 0; i < k; i++)
        rs.live[rs.nlive++] = g_ckpts[i].id;
    char cbuf[CMSG_SPACE(sizeof(int))] = {};
    iovec iov{&rs, sizeof rs};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = cbuf;
    mh.msg_controllen = sizeof cbuf;
    cmsghdr* cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &g_cmd, sizeof g_cmd);
    if (sendmsg(g_ckpts[k].fd, &mh, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof rs))
    {
        snprintf(g_rep.err, sizeof g_rep.err, "fabric worker: checkpoint %llu (pid %d) is gone",
                 static_cast<unsigned long long>(id), static_cast<int>(g_ckpts[k].pid));
        Drop(k);
        return Reply(-1);
    }
    Reply(0);
    _exit(0); // the resumed checkpoint serves from now on
}

int
AddOne(const WireFlow& w)
{
    const int rc =
        hs_fabric_add_flow(g_fab, w.id, static_cast<uint32_t>(w.src), static_cast<uint32_t>(w.dst),
                           w.bytes, w.start_ps, g_rep.err, sizeof g_rep.err);
    if (rc == 0)
        g_nflows++;
    return rc;
}

// The flows of one batch, in order; stops at the first that fails.
void
DoAddBatch(const WireReq& rq, size_t len)
{
    const uint64_t n = rq.a[0];
    if (n > kWireMaxBatch || len != sizeof rq + n * sizeof(WireFlow))
    {
        snprintf(g_rep.err, sizeof g_rep.err, "fabric worker: malformed batch of %llu flows",
                 static_cast<unsigned long long>(n));
        return Reply(-1);
    }
    const auto* flows = reinterpret_cast<const WireFlow*>(g_rx + sizeof rq);
    for (uint64_t i = 0; i < n; i++)
        if (AddOne(flows[i]) != 0)
            return Reply(-1);
    Reply(0);
}

void
Handle(const WireReq& rq, size_t len)
{
    g_rep.err[0] = '\0';
    switch (rq.op)
    {
    case kOpAdd:
        return Reply(AddOne({rq.a[0], rq.a[1], rq.a[2], rq.a[3], rq.a[4]}));
    case kOpAddBatch:
        return DoAddBatch(rq, len);
    case kOpNext:
        SetSafe(rq.a[1]);
        return DoNext(rq.a[0]);
    case kOpLinkStats:
        return DoLinkStats();
    case kOpSafe:
        SetSafe(rq.a[0]);
        return Reply(0);
    case kOpSample:
        return DoSample(rq.a[0]);
    case kOpRollback:
        return DoRollback(rq.a[0], rq.a[1]);
    case kOpQuit:
        Reply(0);
        _exit(0);
    default:
        snprintf(g_rep.err, sizeof g_rep.err, "fabric worker: unknown request %u", rq.op);
        return Reply(-1);
    }
}

// Reads and handles requests until the owner closes the socket or dies.
[[noreturn]] void
ServeRequests()
{
    for (;;)
    {
        const ssize_t n = recv(g_cmd, g_rx, sizeof g_rx, MSG_TRUNC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < static_cast<ssize_t>(sizeof(WireReq)) || n > static_cast<ssize_t>(sizeof g_rx))
            _exit(0); // the owner closed the socket or died
        WireReq rq;
        memcpy(&rq, g_rx, sizeof rq);
        Handle(rq, static_cast<size_t>(n));
    }
}

[[noreturn]] void
ServeLoop()
{
    // A resumed checkpoint first leaves a copy of itself at its own time.
    if (!TakeCheckpoint(g_rep.err, sizeof g_rep.err))
        fprintf(stderr, "%s\n", g_rep.err); // still serves; the owner sees fewer checkpoints
    g_next_ckpt = NextBoundary(hs_fabric_now_ps(g_fab));
    ServeRequests();
}

// Kills and reaps every child (children may still appear while middle
// processes exit, hence the loop), then exits.
[[noreturn]] void
HubShutdown()
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/children", static_cast<int>(getpid()));
    for (;;)
    {
        if (FILE* fp = fopen(path, "r"))
        {
            int pid;
            while (fscanf(fp, "%d", &pid) == 1)
                kill(pid, SIGKILL);
            fclose(fp);
        }
        const pid_t r = waitpid(-1, nullptr, 0);
        if (r < 0 && errno == ECHILD)
            _exit(0);
    }
}

// The owner's other descriptors (client sockets, files) must not be kept
// open by processes that outlive nothing but may sit paused for long.
void
CloseInheritedFds(int keep1, int keep2)
{
    std::vector<int> fds;
    if (DIR* d = opendir("/proc/self/fd"))
    {
        const int self = dirfd(d);
        while (dirent* e = readdir(d))
        {
            const int fd = atoi(e->d_name);
            if (fd > 2 && fd != self && fd != keep1 && fd != keep2)
                fds.push_back(fd);
        }
        closedir(d);
    }
    for (int fd : fds)
        close(fd);
}

[[noreturn]] void
WorkerMain(const hs_scenario* sc, int cmd_fd)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != g_hub)
        _exit(0);
    g_cmd = cmd_fd;
    if (const char* ff =
            getenv("HYSIM_FAULT_FORK")) // read once: every later history inherits the count
        g_fault_fork = strtoull(ff, nullptr, 10);
    g_fab = hs_fabric_create(sc, g_rep.err, sizeof g_rep.err);
    if (g_fab == nullptr)
    {
        g_rep.rc = -1;
        send(g_cmd, &g_rep, sizeof g_rep, MSG_NOSIGNAL);
        _exit(0);
    }
    g_next_ckpt = 0; // the first checkpoint: time 0, before any flow
    if (!TakeCheckpoint(g_rep.err, sizeof g_rep.err))
    {
        g_rep.rc = -1;
        send(g_cmd, &g_rep, sizeof g_rep, MSG_NOSIGNAL);
        _exit(0);
    }
    g_next_ckpt = NextBoundary(0);
    Reply(0); // ready
    ServeRequests();
}

} // namespace

void
WorkerHubMain(const hs_scenario* sc, const WireConfig& cfg, int cmd_fd, int ctrl_fd)
{
    // Dies with the owner; a ^C meant for the owner's terminal is the owner's to handle.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != static_cast<pid_t>(cfg.owner_pid))
        _exit(0);
    prctl(PR_SET_CHILD_SUBREAPER, 1);
    signal(SIGINT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    unsetenv("HYSIM_FABRIC_WORKER"); // the model itself is built in-process here
    CloseInheritedFds(cmd_fd, ctrl_fd);
    g_cfg = cfg;
    g_hub = getpid();
    fflush(nullptr);
    const pid_t w = fork();
    if (w == 0)
    {
        close(ctrl_fd);
        WorkerMain(sc, cmd_fd);
    }
    close(cmd_fd);
    if (w < 0)
        HubShutdown(); // the owner reads end of file and reports it
    for (;;)
    {
        pollfd pf{ctrl_fd, POLLIN, 0};
        poll(&pf, 1, 100);
        while (waitpid(-1, nullptr, WNOHANG) > 0)
        {
        }
        char c;
        if (pf.revents != 0 && read(ctrl_fd, &c, 1) <= 0)
            HubShutdown(); // hs_fabric_destroy or the owner died
    }
}

} // namespace hysim_fab
