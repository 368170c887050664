// hysim fabric: DCQCN congestion control (the Mellanox timer-based variant,
// as in the public HPCC ns-3 model), per flow at the sending NIC, plus the
// receiver's CNP pacing; its timers replayed lazily, bit-identical to events:
// docs/fabric.md, "DCQCN in detail".
#include "fabric_internal.h"

#include <algorithm>

using namespace hysim_fab;

namespace
{

constexpr double kG = 1.0 / 256.0;                  // alpha gain (HPCC, SimAI)
constexpr uint64_t kAlphaPeriodPs = 1'000'000;      // 1 us (HPCC)
constexpr uint64_t kDecreasePeriodPs = 4'000'000;   // 4 us (HPCC)
constexpr uint64_t kDecreaseAfterAlphaPs = 1'000;   // 1 ns: decrease after the alpha update (HPCC)
constexpr uint64_t kIncreasePeriodPs = 300'000'000; // 300 us (HPCC; SimAI: 900 us)
constexpr uint32_t kFastRecoveryStages = 1;         // (HPCC)
constexpr double kAiGbpsPer25G = 0.005;             // 5 Mb/s x Gbps/25 (HPCC)
constexpr double kHaiGbpsPer25G = 0.050;            // 50 Mb/s x Gbps/25 (HPCC)
constexpr double kMinRateGbps = 1.0;                // (HPCC; SimAI: 100 Mb/s)
constexpr uint64_t kCnpIntervalPs = 50'000'000;     // 50 us per flow (real NICs)

// One step of each timer, shared by the timer events and the lazy replay.
void
AlphaStep(Dcqcn& cc)
{
    cc.alpha = (1 - kG) * cc.alpha + (cc.cnp_for_alpha ? kG : 0.0);
    cc.cnp_for_alpha = false;
}

// True when the rate was decreased (the rate-increase timer restarts).
bool
DecreaseStep(Dcqcn& cc)
{
    if (!cc.cnp_for_decrease)
        return false;
    if (cc.inc_stage != 0)
        cc.target_gbps = cc.rate_gbps;
    cc.rate_gbps = std::max(kMinRateGbps, cc.rate_gbps * (1 - cc.alpha / 2));
    cc.inc_stage = 0;
    cc.cnp_for_decrease = false;
    cc.inc_gen++;
    return true;
}

// True while the rate-increase timer goes on.
bool
IncreaseStep(Dcqcn& cc, double line)
{
    if (cc.inc_stage == kFastRecoveryStages)
        cc.target_gbps += kAiGbpsPer25G * line / 25.0;
    else if (cc.inc_stage > kFastRecoveryStages)
        cc.target_gbps += kHaiGbpsPer25G * line / 25.0;
    cc.target_gbps = std::min(cc.target_gbps, line);
    cc.rate_gbps = (cc.rate_gbps + cc.target_gbps) / 2;
    cc.inc_stage++;
    if (cc.rate_gbps >= line * (1 - 1e-9))
    {
        cc.rate_gbps = line; // back at line rate: nothing left to recover
        return false;
    }
    return true;
}

// Lazy timers: an alpha update without a CNP since the last one is
// alpha * (1 - g) + 0.0, and adding 0.0 changes no bit of a product that is
// never negative. Such updates are only counted, and multiplied in, in the
// same order, when alpha is next read (a decrease) or updated with a CNP: a
// flow that sees no CNP again before it ends never needs them.
void
ApplyAlphaLag(Dcqcn& cc)
{
    double alpha = cc.alpha;
    for (uint64_t n = cc.alpha_lag; n > 0; n--)
        alpha *= 1 - kG;
    cc.alpha = alpha;
    cc.alpha_lag = 0;
}

// n alpha updates in a row (lazy timers).
void
LazyAlphaSteps(Dcqcn& cc, uint64_t n)
{
    if (n != 0 && cc.cnp_for_alpha)
    {
        ApplyAlphaLag(cc);
        AlphaStep(cc);
        n--;
    }
    cc.alpha_lag += n;
}

// Event key part k2 of a timer (Schedule: seq << 24 | port << 4 | kind).
uint64_t
TimerK2(Kind kind, uint64_t gen)
{
    return (gen << 24) | kind;
}

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
    DcqcnCatchUp(f); // the flags below must not reach steps that ran before this CNP
    cc.cnp_for_alpha = cc.cnp_for_decrease = true;
    if (cc.first_cnp)
    {
        cc.first_cnp = false;
        cc.alpha = 1.0;
        cc.cnp_for_alpha = false;
        const uint64_t now = Now();
        if (lazy_dcqcn)
        {
            cc.lazy = true;
            cc.alpha_lag = 0;
            cc.alpha_ps = now + kAlphaPeriodPs;
            cc.decrease_ps = now + kDecreasePeriodPs + kDecreaseAfterAlphaPs;
            return;
        }
        ArmTimer(f, kAlpha, now + kAlphaPeriodPs);
        ArmTimer(f, kDecrease, now + kDecreasePeriodPs + kDecreaseAfterAlphaPs);
    }
}

bool
hs_fabric::BeforeCurrent(uint64_t now, uint64_t at_ps, uint64_t k0, uint64_t k1, uint64_t k2) const
{
    if (at_ps != now)
        return at_ps < now;
    if (k0 != cur_k0)
        return k0 < cur_k0;
    if (k1 != cur_k1)
        return k1 < cur_k1;
    return k2 < cur_k2;
}

void
hs_fabric::DcqcnCatchUp(Flow* f)
{
    Dcqcn& cc = f->cc;
    if (!cc.lazy)
        return;
    const uint64_t now = Now();
    const double line = nic_gbps;
    for (;;)
    {
        // Most of the replay: with no CNP pending (flags are only ever set
        // outside the replay), alpha updates are only counted and decreases
        // change nothing, up to the next rate increase; otherwise alpha updates
        // alone up to the next other timer.
        const bool quiet = !cc.cnp_for_alpha && !cc.cnp_for_decrease;
        const uint64_t until = std::min({quiet ? kNever : cc.decrease_ps, cc.increase_ps, now});
        if (cc.alpha_ps < until)
        {
            const uint64_t n = (until - cc.alpha_ps + kAlphaPeriodPs - 1) / kAlphaPeriodPs;
            LazyAlphaSteps(cc, n);
            cc.alpha_ps += n * kAlphaPeriodPs;
        }
        if (quiet && cc.decrease_ps < until)
        {
            const uint64_t n = (until - cc.decrease_ps + kDecreasePeriodPs - 1) / kDecreasePeriodPs;
            cc.decrease_ps += n * kDecreasePeriodPs;
        }
        // The earliest timer, equal times by key (alpha < decrease < increase).
        Kind kind = kAlpha;
        uint64_t at = cc.alpha_ps, k2 = TimerK2(kAlpha, 0);
        if (cc.decrease_ps < at)
        {
            kind = kDecrease;
            at = cc.decrease_ps;
            k2 = TimerK2(kDecrease, 0);
        }
        const uint64_t inc_k2 = TimerK2(kIncrease, cc.inc_gen);
        if (cc.increase_ps < at || (cc.increase_ps == at && inc_k2 < k2))
        {
            kind = kIncrease;
            at = cc.increase_ps;
            k2 = inc_k2;
        }
        if (!BeforeCurrent(now, at, kClassNet, f->id, k2))
            return;
        switch (kind)
        {
        case kAlpha:
            LazyAlphaSteps(cc, 1);
            cc.alpha_ps += kAlphaPeriodPs;
            break;
        case kDecrease:
            cc.decrease_ps += kDecreasePeriodPs;
            if (cc.cnp_for_decrease)
                ApplyAlphaLag(cc); // the decrease reads alpha
            if (DecreaseStep(cc))
                cc.increase_ps = cc.last_increase_ps = at + kIncreasePeriodPs;
            break;
        default:
            if (IncreaseStep(cc, line))
                cc.increase_ps = cc.last_increase_ps = at + kIncreasePeriodPs;
            else
                cc.increase_ps = kNever;
            break;
        }
    }
}

void
hs_fabric::DcqcnAllAcked(Flow* f)
{
    Dcqcn& cc = f->cc;
    if (!cc.lazy)
        return;
    DcqcnCatchUp(f);
    cc.lazy = false;
    // The timer events would each have run once more, found the flow
    // acknowledged and stopped; superseded rate-increase timers ran too.
    const uint64_t last = std::max({cc.alpha_ps, cc.decrease_ps, cc.last_increase_ps});
    Schedule(last, kClassNet, kDcqcnEnd, f, nullptr, 0, 0);
}

void
hs_fabric::DcqcnTimer(Flow* f, Kind kind, uint64_t gen)
{
    if (f->snd_una >= f->nseg)
        return; // everything acknowledged: the timers stop
    Dcqcn& cc = f->cc;
    const uint64_t now = Now();
    switch (kind)
    {
    case kAlpha:
        AlphaStep(cc);
        ArmTimer(f, kAlpha, now + kAlphaPeriodPs);
        return;
    case kDecrease:
        ArmTimer(f, kDecrease, now + kDecreasePeriodPs);
        if (DecreaseStep(cc))
            ArmTimer(f, kIncrease, now + kIncreasePeriodPs, cc.inc_gen);
        return;
    case kIncrease:
        if (gen != cc.inc_gen)
            return; // superseded by a later decrease
        if (IncreaseStep(cc, nic_gbps))
            ArmTimer(f, kIncrease, now + kIncreasePeriodPs, cc.inc_gen);
        return;
    default:
        return;
    }
}
