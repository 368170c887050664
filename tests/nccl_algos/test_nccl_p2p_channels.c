/*
 * NCCL's p2p channels in hysimd's tuner (bridge/collectives/collective_tuner.c): how many
 * channels a Send/Recv or AllToAll peer uses, and the rate cap they put on
 * its flow.
 *
 *   p2p_count     P = the channel count rounded up to a power of two (24 → 32,
 *                 3 → 4, 5 → 8), bounded by NCCL_MIN/MAX_NCHANNELS and
 *                 nccl.channels like the collectives' count, and by
 *                 NCCL_MIN/MAX_P2P_NCHANNELS before the rounding; 0 for the
 *                 collectives; across servers one per NIC rail
 *   p2p_parts     NCCL's split of one peer's bytes: 2 ranks use P/2 channels
 *                 while the parts stay ≤ 16 MiB, then P; 8 ranks start from
 *                 P/8; tiny transfers one channel per 64 KiB; an AllToAll's
 *                 rounds share channels once a round uses all P
 *   p2p_cap       the flow's cap is k channels' rate: 16 channels cap a 1 GiB
 *                 Send/Recv 4 times higher than 4, 3 channels as 4; an
 *                 unshared AllToAll channel moves the payload a Send/Recv
 *                 one does; a shared one less per round, more in all
 *   p2p_default   with the default 24 (P = 32) a 1 GiB transfer's cap lies
 *                 above the NVLink rate, so the link binds; up to 32 × 16 KiB
 *                 (NCCL's LL threshold) no cap, above it one
 *   p2p_override  nccl.channel_gbps X caps a Send/Recv at k × X (an AllToAll
 *                 round whose channels m rounds share: k × X / m), 0 removes it;
 *                 calibrated: false and two servers have no cap
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collective_tuner.h"
#include "test_check.h"

static const enum hs_coll_kind SR = HS_COLL_SEND, A2A = HS_COLL_ALL_TO_ALL;

/* One H200 server of bench/real (NVLink 3600 Gb/s, 8 NICs of 400 Gb/s), NCCL left to choose. */
static void h200(hs_scenario *sc)
{
    memset(sc, 0, sizeof(*sc));
    sc->servers.gpus_per_server = 8;
    sc->nvlink.gbps_per_gpu = 3600;
    sc->nics.per_server = 8;
    sc->nics.gbps = 400;
    sc->nccl.calibrated = true;
    sc->nccl.channel_gbps = -1; /* each kind's fitted cap */
}

static hs_nccl_plan plan(const hs_scenario *sc, enum hs_coll_kind k, uint64_t bytes, uint32_t n, uint32_t nodes)
{
    hs_nccl_plan p;
    char err[256] = "";
    CHECK(hs_tuner_plan(sc, k, bytes, n, nodes, 0, 0, &p, err, sizeof err) == 0, "tuner: %s", err);
    return p;
}

static void no_env(void)
{
    unsetenv("NCCL_MIN_NCHANNELS");
    unsetenv("NCCL_MAX_NCHANNELS");
    unsetenv("NCCL_MIN_P2P_NCHANNELS");
    unsetenv("NCCL_MAX_P2P_NCHANNELS");
}

static uint32_t p2p_with_channels(int channels)
{
    hs_scenario sc;
    h200(&sc);
    sc.nccl.channels = channels;
    return plan(&sc, SR, 1 << 30, 2, 1).p2p_channels;
}

static void test_count(void)
{
    no_env();
    hs_scenario sc;
    h200(&sc);
    CHECK(plan(&sc, SR, 1 << 30, 2, 1).p2p_channels == 32, "default: %u p2p channels, NCCL has 32",
          plan(&sc, SR, 1 << 30, 2, 1).p2p_channels);
    CHECK(plan(&sc, A2A, 1 << 20, 8, 1).p2p_channels == 32, "AllToAll: not the same P");
    static const int forced[][2] = {{1, 1}, {2, 2}, {3, 4}, {4, 4}, {5, 8}, {6, 8}, {12, 16}, {16, 16}, {64, 64}};
    for (size_t i = 0; i < sizeof forced / sizeof forced[0]; i++)
        CHECK(p2p_with_channels(forced[i][0]) == (uint32_t)forced[i][1], "nccl.channels %d: %u p2p channels, want %d",
              forced[i][0], p2p_with_channels(forced[i][0]), forced[i][1]);
    setenv("NCCL_MAX_NCHANNELS", "3", 1);
    CHECK(plan(&sc, SR, 1 << 30, 2, 1).p2p_channels == 4, "NCCL_MAX_NCHANNELS=3: %u",
          plan(&sc, SR, 1 << 30, 2, 1).p2p_channels);
    sc.nccl.channels = 16; /* the scenario's key wins over the environment */
    CHECK(plan(&sc, SR, 1 << 30, 2, 1).p2p_channels == 16, "nccl.channels 16 with MAX=3: %u",
          plan(&sc, SR, 1 << 30, 2, 1).p2p_channels);
    no_env();
    sc.nccl.channels = 0;
    /* NCCL's own p2p bounds, before the rounding: 24 → at most 6 → 8; at least 40 → 64 */
    setenv("NCCL_MAX_P2P_NCHANNELS", "6", 1);
    CHECK(plan(&sc, SR, 1 << 30, 2, 1).p2p_channels == 8, "NCCL_MAX_P2P_NCHANNELS=6: %u",
          plan(&sc, SR, 1 << 30, 2, 1).p2p_channels);
    CHECK(plan(&sc, HS_COLL_ALL_REDUCE, 1 << 30, 2, 1).channels == 24,
          "NCCL_MAX_P2P_NCHANNELS moved the collectives' channels");
    unsetenv("NCCL_MAX_P2P_NCHANNELS");
    setenv("NCCL_MIN_P2P_NCHANNELS", "40", 1);
    CHECK(plan(&sc, SR, 1 << 30, 2, 1).p2p_channels == 64, "NCCL_MIN_P2P_NCHANNELS=40: %u",
          plan(&sc, SR, 1 << 30, 2, 1).p2p_channels);
    no_env();
    CHECK(plan(&sc, HS_COLL_ALL_REDUCE, 1 << 30, 2, 1).p2p_channels == 0, "a collective has p2p channels");
    CHECK(plan(&sc, SR, 1 << 30, 2, 2).p2p_channels == 8, "two servers: %u, one per NIC rail",
          plan(&sc, SR, 1 << 30, 2, 2).p2p_channels);
    /* the small-size channel drop of the collectives does not apply: NCCL's p2p count is the communicator's */
    CHECK(plan(&sc, SR, 4096, 2, 1).p2p_channels == 32, "4 KiB Send/Recv: %u", plan(&sc, SR, 4096, 2, 1).p2p_channels);
}

static hs_nccl_plan with_channels(int channels, enum hs_coll_kind k, uint64_t bytes, uint32_t n)
{
    hs_scenario sc;
    h200(&sc);
    sc.nccl.channels = channels;
    return plan(&sc, k, bytes, n, 1);
}

static void test_parts(void)
{
    no_env();
    static const struct {
        int channels;
        uint64_t bytes;
        uint32_t ranks, parts;
    } cases[] = {
        {1, 1ull << 30, 2, 1},   {2, 64ull << 20, 2, 2},  {4, 16ull << 20, 2, 2},  {4, 64ull << 20, 2, 4},
        {8, 64ull << 20, 2, 4},  {8, 256ull << 20, 2, 8}, {16, 64ull << 20, 2, 8}, {24, 64ull << 20, 2, 16},
        {24, 1ull << 30, 2, 32}, {24, 64 << 10, 2, 1},    {24, 200 << 10, 2, 4},   {24, 16ull << 20, 8, 4},
        {24, 1ull << 30, 8, 32}, {4, 1 << 20, 8, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        hs_nccl_plan p = with_channels(cases[i].channels, SR, cases[i].bytes, cases[i].ranks);
        CHECK(p.p2p_parts == cases[i].parts && p.p2p_sharing == 1,
              "%d channels, %llu B, %u ranks: %u parts (%u shared), want %u", cases[i].channels,
              (unsigned long long)cases[i].bytes, cases[i].ranks, p.p2p_parts, p.p2p_sharing, cases[i].parts);
    }
    /* AllToAll, 2 ranks, 4 channels: 32 MiB a peer on channels {1, 3} apart from the own GPU's {0, 2};
       512 MiB on all four, shared with it */
    hs_nccl_plan a = with_channels(4, A2A, 32ull << 20, 2), b = with_channels(4, A2A, 512ull << 20, 2);
    CHECK(a.p2p_parts == 2 && a.p2p_sharing == 1, "32 MiB AllToAll: %u parts, %u sharing", a.p2p_parts, a.p2p_sharing);
    CHECK(b.p2p_parts == 4 && b.p2p_sharing == 2, "512 MiB AllToAll: %u parts, %u sharing", b.p2p_parts, b.p2p_sharing);
    /* 8 ranks on 4 channels: one channel a round, rounds r and r + 4 on the same one */
    hs_nccl_plan c = with_channels(4, A2A, 1 << 20, 8);
    CHECK(c.p2p_parts == 1 && c.p2p_sharing == 2, "8-rank AllToAll: %u parts, %u sharing", c.p2p_parts, c.p2p_sharing);
}

/* Payload GB/s one channel of the plan moves for its round (the cap is in wire bytes). */
static double per_channel_payload(const hs_nccl_plan *p) { return p->channel_gbps / p->p2p_parts / p->wire_factor; }

static double cap(int channels, enum hs_coll_kind k, uint32_t n)
{
    return with_channels(channels, k, 1 << 30, n).channel_gbps;
}

static void test_cap(void)
{
    no_env();
    double sr4 = cap(4, SR, 2), sr16 = cap(16, SR, 2), sr3 = cap(3, SR, 2);
    CHECK(sr4 > 0 && sr16 > 3.999 * sr4 && sr16 < 4.001 * sr4, "Send/Recv cap: %.2f GB/s on 4, %.2f on 16 channels",
          sr4, sr16);
    CHECK(sr3 == sr4, "3 channels cap at %.2f, 4 at %.2f: P rounds 3 up to 4", sr3, sr4);
    CHECK(cap(1, A2A, 2) * 8 > 0.999 * cap(8, A2A, 2) && cap(1, A2A, 2) * 8 < 1.001 * cap(8, A2A, 2),
          "AllToAll: 8 channels do not cap 8 times 1");
    hs_nccl_plan sr = with_channels(4, SR, 1ull << 30, 2), alone = with_channels(4, A2A, 32ull << 20, 2),
                 shared = with_channels(4, A2A, 512ull << 20, 2);
    double s = per_channel_payload(&sr), a = per_channel_payload(&alone), h = per_channel_payload(&shared);
    CHECK(a > 0.999 * s && a < 1.001 * s, "an unshared AllToAll channel moves %.2f GB/s, a Send/Recv one %.2f", a, s);
    CHECK(h < a && 2 * h > a, "a channel shared by 2 rounds gives each %.2f GB/s, alone %.2f", h, a);
}

static void test_default(void)
{
    no_env();
    hs_scenario sc;
    h200(&sc);
    double link = sc.nvlink.gbps_per_gpu / 8.0; /* GB/s of wire bytes */
    /* 1 GiB: all 32 channels (up to 256 MiB NCCL uses 16, whose cap lies about at the link's rate) */
    hs_nccl_plan sr = plan(&sc, SR, 1 << 30, 2, 1), a2a = plan(&sc, A2A, 1 << 30, 2, 1);
    CHECK(sr.channel_gbps > link, "default Send/Recv cap %.1f GB/s below the link's %.1f", sr.channel_gbps, link);
    /* the two pairs of a 2-rank AllToAll share a GPU's link: each gets at most half */
    CHECK(a2a.channel_gbps > link / 2, "default AllToAll pair cap %.1f GB/s below half the link's %.1f",
          a2a.channel_gbps, link);
    /* NCCL sends up to P × 16 KiB by LL, whose channel rate was not measured */
    CHECK(plan(&sc, SR, 512 << 10, 2, 1).channel_gbps == 0, "a 512 KiB Send/Recv (LL in NCCL) is capped");
    CHECK(plan(&sc, SR, (512 << 10) + 1, 2, 1).channel_gbps > 0, "a Send/Recv above 512 KiB (Simple) is not capped");
    sc.nccl.channels = 4;
    CHECK(plan(&sc, SR, (64 << 10) + 1, 2, 1).channel_gbps > 0, "4 channels: 64 KiB + 1 (Simple) not capped");
}

static void test_override(void)
{
    no_env();
    hs_scenario sc;
    h200(&sc);
    sc.nccl.channels = 4;
    sc.nccl.channel_gbps = 10;
    hs_nccl_plan p = plan(&sc, SR, 1 << 30, 2, 1);
    CHECK(p.channel_gbps > 39.999 && p.channel_gbps < 40.001, "channel_gbps 10 on 4 channels: %.3f", p.channel_gbps);
    p = plan(&sc, A2A, 512ull << 20, 2, 1); /* 4 parts, each channel shared with the own GPU's round */
    CHECK(p.channel_gbps > 19.999 && p.channel_gbps < 20.001, "channel_gbps 10, shared AllToAll: %.3f", p.channel_gbps);
    sc.nccl.channel_gbps = 0;
    CHECK(plan(&sc, SR, 1 << 30, 2, 1).channel_gbps == 0, "channel_gbps 0 leaves a Send/Recv cap");
    CHECK(plan(&sc, A2A, 1 << 30, 2, 1).channel_gbps == 0, "channel_gbps 0 leaves an AllToAll cap");
    sc.nccl.channel_gbps = -1;
    sc.nccl.calibrated = false;
    CHECK(plan(&sc, SR, 1 << 30, 2, 1).channel_gbps == 0, "calibrated: false is capped");
    sc.nccl.calibrated = true;
    CHECK(plan(&sc, SR, 1 << 30, 2, 2).channel_gbps == 0, "a Send/Recv across servers is capped");
    CHECK(plan(&sc, SR, 1 << 30, 2, 1).channel_gbps > 0, "4 channels on one server are not capped");
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        void (*fn)(void);
    } cases[] = {
        {"p2p_count", test_count},     {"p2p_parts", test_parts},       {"p2p_cap", test_cap},
        {"p2p_default", test_default}, {"p2p_override", test_override},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (argc > 1 && strcmp(argv[1], cases[i].name) == 0) {
            cases[i].fn();
            printf("%s: ok\n", cases[i].name);
            return 0;
        }
    fprintf(stderr, "usage: %s p2p_count|p2p_parts|p2p_cap|p2p_default|p2p_override\n", argv[0]);
    return 2;
}
