// hysim fabric: DCQCN congestion control (the Mellanox timer-based variant, as
// in the public HPCC ns-3 model), per flow (queue pair) at the sending NIC,
// plus the receiver's CNP pacing. Values and sources: roce-model.md.
//
//   - A flow starts at line rate. The receiving NIC answers a CE-marked
//     segment with a CNP, at most one per kCnpIntervalPs per flow.
//   - First CNP: alpha = 1, the alpha and rate-decrease timers start.
//   - Every kAlphaPeriodPs: alpha = (1 - g) alpha + g [a CNP arrived since].
//   - Every kDecreasePeriodPs, if a CNP arrived since: target = rate (unless
//     no increase happened since the last decrease: HPCC's default without
//     target clamping), rate = max(min rate, rate (1 - alpha / 2)), and the
//     rate-increase timer restarts.
//   - Every kIncreasePeriodPs: kFastRecoveryStages stages of fast recovery
//     (rate = (rate + target) / 2), one stage of additive increase (target +=
//     AI), then hyper increase (target += HAI), each followed by the averaging.
//   - AI and HAI scale with the NIC rate (5 and 50 Mb/s per 25 Gb/s).
// Timers stop once every segment of the flow is acknowledged.
#include "fabric_internal.h"

#include <algorithm>

using namespace hysim_fab;

namespace {

constexpr double kG = 1.0 / 256.0;                   // alpha gain (HPCC, SimAI)
constexpr uint64_t kAlphaPeriodPs = 1'000'000;       // 1 us (HPCC)
constexpr uint64_t kDecreasePeriodPs = 4'000'000;    // 4 us (HPCC)
constexpr uint64_t kDecreaseAfterAlphaPs = 1'000;    // 1 ns: decrease after the alpha update (HPCC)
constexpr uint64_t kIncreasePeriodPs = 300'000'000;  // 300 us (HPCC; SimAI: 900 us)
constexpr uint32_t kFastRecoveryStages = 1;          // (HPCC)
constexpr double kAiGbpsPer25G = 0.005;              // 5 Mb/s x Gbps/25 (HPCC)
constexpr double kHaiGbpsPer25G = 0.050;             // 50 Mb/s x Gbps/25 (HPCC)
constexpr double kMinRateGbps = 1.0;                 // (HPCC; SimAI: 100 Mb/s)
constexpr uint64_t kCnpIntervalPs = 50'000'000;      // 50 us per flow (real NICs)

} // namespace

void
hs_fabric::DcqcnInit(Flow* f)
{
    f->cc.rate_gbps = f->cc.target_gbps = nic_gbps;
    f->cc.alpha = 1.0;
}

bool
hs_fabric::DcqcnCnpDue(Flow* f)
{
    if (!dcqcn)
        return false;
    const uint64_t now = Now();
    if (f->cnp_ps != kNever && now - f->cnp_ps < kCnpIntervalPs)
        return false;
    f->cnp_ps = now;
    return true;
}

void
hs_fabric::DcqcnOnCnp(Flow* f)
{
    if (!dcqcn || f->snd_una >= f->nseg)
        return;
    Dcqcn& cc = f->cc;
    cc.cnp_for_alpha = cc.cnp_for_decrease = true;
    if (cc.first_cnp)
    {
        cc.first_cnp = false;
        cc.alpha = 1.0;
        cc.cnp_for_alpha = false;
        const uint64_t now = Now();
        ArmTimer(f, kAlpha, now + kAlphaPeriodPs);
        ArmTimer(f, kDecrease, now + kDecreasePeriodPs + kDecreaseAfterAlphaPs);
    }
}

void
hs_fabric::DcqcnTimer(Flow* f, Kind kind, uint64_t gen)
{
    if (f->snd_una >= f->nseg)
        return; // everything acknowledged: the timers stop
    Dcqcn& cc = f->cc;
    const uint64_t now = Now();
    const double line = nic_gbps;
    switch (kind)
    {
    case kAlpha:
        cc.alpha = (1 - kG) * cc.alpha + (cc.cnp_for_alpha ? kG : 0.0);
        cc.cnp_for_alpha = false;
        ArmTimer(f, kAlpha, now + kAlphaPeriodPs);
        return;
    case kDecrease:
        ArmTimer(f, kDecrease, now + kDecreasePeriodPs);
        if (!cc.cnp_for_decrease)
            return;
        if (cc.inc_stage != 0)
            cc.target_gbps = cc.rate_gbps;
        cc.rate_gbps = std::max(kMinRateGbps, cc.rate_gbps * (1 - cc.alpha / 2));
        cc.inc_stage = 0;
        cc.cnp_for_decrease = false;
        cc.inc_gen++;
        ArmTimer(f, kIncrease, now + kIncreasePeriodPs, cc.inc_gen);
        return;
    case kIncrease:
        if (gen != cc.inc_gen)
            return; // superseded by a later decrease
        if (cc.inc_stage == kFastRecoveryStages)
            cc.target_gbps += kAiGbpsPer25G * line / 25.0;
        else if (cc.inc_stage > kFastRecoveryStages)
            cc.target_gbps += kHaiGbpsPer25G * line / 25.0;
        cc.target_gbps = std::min(cc.target_gbps, line);
        cc.rate_gbps = (cc.rate_gbps + cc.target_gbps) / 2;
        cc.inc_stage++;
        if (cc.rate_gbps >= line * (1 - 1e-9))
            cc.rate_gbps = line; // back at line rate: nothing left to recover
        else
            ArmTimer(f, kIncrease, now + kIncreasePeriodPs, cc.inc_gen);
        return;
    default:
        return;
    }
}
