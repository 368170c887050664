// hysim fabric: the messages between the owner of a worker-mode hs_fabric
// (fabric_proxy.cc) and its worker process (fabric_worker.cc). One request,
// one reply, over a SOCK_SEQPACKET socketpair: a message is never split or
// merged, so a process that reads one request reads nothing of the next.
// Flows travel in batches (kOpAddBatch): a WireReq followed, in the same
// message, by up to kWireMaxBatch WireFlow records.
// Link samples (kOpSample on) travel the other way: while it handles a
// request, the worker sends each sample as it is taken, in one or more
// WireSampleHdr messages, before the request's WireRep; kOpLinkStats is
// answered the same way, with every link's statistics in WireLinksHdr messages.
#ifndef HYSIM_NS3GLUE_FABRIC_WIRE_H
#define HYSIM_NS3GLUE_FABRIC_WIRE_H

#include "hysim/fabric.h"

#include <cstdint>
#include <sys/types.h>

namespace hysim_fab
{

constexpr uint32_t kWireMaxCheckpoints = 64;      // bound on hs_fabric_options.checkpoints_max
constexpr uint32_t kWireMaxBatch = 2048;          // flows per kOpAddBatch message (80 KiB)
constexpr uint32_t kWireMaxSampleLinks = 2048;    // links per sample message (48 KiB)
constexpr uint32_t kWireSampleMagic = 0x53414d50; // "SAMP": never a WireRep.rc
constexpr uint32_t kWireMaxLinkStats = 256;       // links per WireLinksHdr message (32 KiB)
constexpr uint32_t kWireLinksMagic = 0x4c494e4b;  // "LINK"

enum WireOp : uint32_t
{
    kOpAdd = 1,       // a[0..4] = id, src, dst, bytes, start_ps
    kOpNext = 2,      // a[0] = limit_ps, a[1] = safe time (as kOpSafe, before the step)
    kOpLinkStats = 3, // every link's statistics (WireLinksHdr messages before the reply)
    kOpSafe = 4,      // a[0] = safe time: drop checkpoints no rollback can need
    kOpRollback = 5,  // a[0] = checkpoint id to resume, a[1] = next checkpoint id to assign
    kOpQuit = 6,
    kOpAddBatch = 7, // a[0] = count; count WireFlow records follow in the message
    kOpSample = 8,   // a[0] = interval_ps: sample links from now on (before any flow)
};

struct WireFlow
{
    uint64_t id, src, dst, bytes, start_ps;
};

struct WireReq
{
    uint32_t op = 0;
    uint32_t pad = 0;
    uint64_t a[5] = {};
};

struct WireCheckpoint
{
    uint64_t id;
    uint64_t time_ps;
    uint64_t nflows;     // flows handed over when it was taken
    uint64_t sampled_ps; // time of the last link sample sent before it was taken (0: none)
};

// One link sample, or a part of one: links [first, first + count) of total.
struct WireSampleHdr
{
    uint32_t magic = kWireSampleMagic;
    uint32_t count = 0;
    uint64_t t_ps = 0;
    uint64_t first = 0;
    uint64_t total = 0;
    // count hs_fabric_link_sample records follow in the message
};

// Statistics of links [first, first + count) of total.
struct WireLinksHdr
{
    uint32_t magic = kWireLinksMagic;
    uint32_t count = 0;
    uint64_t first = 0;
    uint64_t total = 0;
    // count hs_fabric_link_stats records follow in the message
};

// Every reply carries the worker's time, counters and checkpoint table, so the
// owner answers now/in-flight/stats without a round trip.
struct WireRep
{
    int32_t rc = 0;
    uint32_t nckpt = 0;
    uint64_t now_ps = 0;
    uint64_t link_count = 0;
    int64_t pid = 0; // the worker that replied
    hs_flow_done done{};
    hs_fabric_stats stats{};
    WireCheckpoint ckpt[kWireMaxCheckpoints + 1];
    char err[256] = "";
};

// Sent to a parked checkpoint to make it the worker, with the owner's command
// socket attached (SCM_RIGHTS).
struct WireResume
{
    uint64_t next_id = 0; // first checkpoint id it may assign
    uint32_t nlive = 0;   // checkpoints older than it that still exist
    uint32_t pad = 0;
    uint64_t live[kWireMaxCheckpoints] = {};
};

// The worker-mode settings the owner hands to the worker at creation.
struct WireConfig
{
    uint64_t interval_ps;
    uint32_t max_checkpoints;
    int64_t owner_pid;
};

// fabric_worker.cc: runs in the freshly forked hub process; never returns.
[[noreturn]] void WorkerHubMain(const hs_scenario* sc, const WireConfig& cfg, int cmd_fd,
                                int ctrl_fd);

} // namespace hysim_fab

#endif
