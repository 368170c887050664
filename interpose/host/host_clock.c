/*
 * The process's simulated host clock and the clock functions that read it
 * (clock_gettime, gettimeofday, time, timespec_get): how each call moves it
 * under run.host_time, and what reads pass through, in docs/time.md, "The
 * host clock".
 */
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "api_cost.h"
#include "hysim/scenario.h" /* enum hs_host_time */
#include "internal.h"

#define NS_PER_S 1000000000ull

typedef int (*clock_gettime_fn)(clockid_t, struct timespec *);
typedef int (*gettimeofday_fn)(struct timeval *, void *);
typedef time_t (*time_fn)(time_t *);
typedef int (*timespec_get_fn)(struct timespec *, int);

static struct {
    clock_gettime_fn clock_gettime;
    gettimeofday_fn gettimeofday;
    time_fn time;
    timespec_get_fn timespec_get;
} real; /* libc's own functions, found by the constructor; read with atomics */

static int g_sim;                /* HYSIM_ENDPOINT was set at start */
static _Atomic uint64_t g_clock; /* ns of simulated time */
static _Atomic int g_mode = HS_HOST_TIME_REAL;
static double g_scale = 1.0;
static uint64_t g_fixed_ns;
static _Atomic uint64_t g_epoch_ns;
static int g_mode_from_env, g_epoch_from_env;

static __thread unsigned t_depth;   /* nesting of intercepted calls */
static __thread uint64_t t_call_ns; /* what the current outermost call costs (api_cost.h) */

/*
 * Host time under real/scaled. Reading the thread's CPU time is a system call
 * (no vDSO; ~1 µs on a VM), too dear twice per launch. So a short gap between
 * calls is credited by the monotonic clock (vDSO), which equals CPU time
 * unless the thread was preempted in it, and the thread's CPU time is sampled
 * after a long gap, after a long call (it may have blocked) and every
 * HS_SAMPLE_EVERY calls: the sample credits the CPU time spent outside calls
 * since the previous sample, less what the short gaps already credited. A
 * thread preempted in its short gaps is credited more than its CPU time
 * there; the clock cannot go back, so the excess is a debt the next credits
 * pay first (docs/time.md, "Host time under real").
 */
#define HS_SHORT_GAP_NS 50000u
#define HS_SAMPLE_EVERY 64u

static __thread uint64_t t_mono_exit;     /* monotonic ns when the last call returned */
static __thread uint64_t t_mono_entry;    /* monotonic ns when the current call began */
static __thread uint64_t t_cpu_sample;    /* thread CPU time at the last sample */
static __thread uint64_t t_inside_ns;     /* wall time inside calls since the sample */
static __thread uint64_t t_credited_ns;   /* host time credited by short gaps since the sample */
static __thread uint64_t t_short_wall_ns; /* wall time of those short gaps */
static __thread uint64_t t_debt_ns;       /* credited beyond the CPU time the samples found, to pay back */
static __thread unsigned t_calls;         /* calls since the sample */

static void *libc_symbol(const char *name, const char *version)
{
    void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return NULL;
    void *p = dlvsym(h, name, version);
    if (!p)
        p = dlsym(h, name);
    dlclose(h);
    return p;
}

/*
 * Looked up once, in the constructor: a lazy lookup could run inside a
 * sanitizer runtime that reads the clock while holding its allocator lock,
 * and dlopen allocates. Until then (and if a lookup fails) the system calls
 * stand in: slower than libc's vDSO path, never wrong.
 */
static void resolve_real(void)
{
    __atomic_store_n(&real.gettimeofday, (gettimeofday_fn)libc_symbol("gettimeofday", "GLIBC_2.2.5"), __ATOMIC_RELEASE);
    __atomic_store_n(&real.time, (time_fn)libc_symbol("time", "GLIBC_2.2.5"), __ATOMIC_RELEASE);
    __atomic_store_n(&real.timespec_get, (timespec_get_fn)libc_symbol("timespec_get", "GLIBC_2.16"), __ATOMIC_RELEASE);
    __atomic_store_n(&real.clock_gettime, (clock_gettime_fn)libc_symbol("clock_gettime", "GLIBC_2.17"),
                     __ATOMIC_RELEASE);
}

static int real_clock_gettime(clockid_t id, struct timespec *ts)
{
    clock_gettime_fn f = __atomic_load_n(&real.clock_gettime, __ATOMIC_ACQUIRE);
    return f ? f(id, ts) : (int)syscall(SYS_clock_gettime, id, ts);
}

static int real_gettimeofday(struct timeval *tv, void *tz)
{
    gettimeofday_fn f = __atomic_load_n(&real.gettimeofday, __ATOMIC_ACQUIRE);
    return f ? f(tv, tz) : (int)syscall(SYS_gettimeofday, tv, tz);
}

static time_t real_time(time_t *t)
{
    time_fn f = __atomic_load_n(&real.time, __ATOMIC_ACQUIRE);
    return f ? f(t) : (time_t)syscall(SYS_time, t);
}

static int real_timespec_get(struct timespec *ts, int base)
{
    timespec_get_fn f = __atomic_load_n(&real.timespec_get, __ATOMIC_ACQUIRE);
    if (f)
        return f(ts, base);
    return base == TIME_UTC && real_clock_gettime(CLOCK_REALTIME, ts) == 0 ? base : 0;
}

static uint64_t real_ns(clockid_t id)
{
    struct timespec ts;
    real_clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * NS_PER_S + (uint64_t)ts.tv_nsec;
}

static void bad_env(const char *name, const char *value, const char *expected)
{
    fprintf(stderr, "hysim: %s=%s is not %s\n", name, value, expected);
    exit(1);
}

static int parse_u64(const char *s, uint64_t *out)
{
    char *end;
    if (!*s || *s == '-')
        return -1;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*end || errno)
        return -1;
    *out = v;
    return 0;
}

static void parse_host_time(const char *v)
{
    if (!strcmp(v, "real")) {
        g_mode = HS_HOST_TIME_REAL;
    } else if (!strcmp(v, "zero")) {
        g_mode = HS_HOST_TIME_ZERO;
    } else if (!strcmp(v, "calls")) {
        g_mode = HS_HOST_TIME_CALLS;
    } else if (!strncmp(v, "fixed:", 6)) {
        if (parse_u64(v + 6, &g_fixed_ns) < 0)
            bad_env("HYSIM_HOST_TIME", v, "fixed:NS with NS a whole number of nanoseconds");
        g_mode = HS_HOST_TIME_FIXED;
    } else if (!strncmp(v, "scaled:", 7)) {
        char *end;
        double f = strtod(v + 7, &end);
        if (end == v + 7 || *end || !isfinite(f) || f < 0)
            bad_env("HYSIM_HOST_TIME", v, "scaled:F with F a non-negative number");
        g_scale = f;
        g_mode = HS_HOST_TIME_SCALED;
    } else {
        bad_env("HYSIM_HOST_TIME", v, "one of real, calls, zero, fixed:NS, scaled:F");
    }
    g_mode_from_env = 1;
}

__attribute__((constructor)) static void hs_clock_init(void)
{
    resolve_real();
    const char *ep = getenv("HYSIM_ENDPOINT");
    g_sim = ep && *ep;
    if (!g_sim)
        return;
    const char *ht = getenv("HYSIM_HOST_TIME");
    if (ht && *ht)
        parse_host_time(ht);
    const char *epoch = getenv("HYSIM_EPOCH_NS");
    uint64_t e;
    if (epoch && *epoch) {
        if (parse_u64(epoch, &e) < 0)
            bad_env("HYSIM_EPOCH_NS", epoch, "a whole number of nanoseconds");
        g_epoch_from_env = 1;
    } else {
        e = real_ns(CLOCK_REALTIME);
    }
    atomic_store(&g_epoch_ns, e);
    /* The main thread's host time is counted from here; other threads' from their start. */
    t_cpu_sample = real_ns(CLOCK_THREAD_CPUTIME_ID);
    t_mono_exit = real_ns(CLOCK_MONOTONIC);
}

void hs_clock_apply_setup(uint32_t host_time, double scale, uint64_t fixed_ns, uint64_t epoch_ns)
{
    if (!g_mode_from_env && host_time <= HS_HOST_TIME_CALLS) {
        g_scale = scale;
        g_fixed_ns = fixed_ns;
        atomic_store(&g_mode, (int)host_time);
    }
    if (!g_epoch_from_env && epoch_ns)
        atomic_store(&g_epoch_ns, epoch_ns);
}

int hs_clock_simulated(void) { return g_sim; }

uint64_t hs_clock_now(void) { return atomic_load(&g_clock); }

void hs_clock_advance_to(uint64_t ns)
{
    uint64_t cur = atomic_load(&g_clock);
    while (cur < ns && !atomic_compare_exchange_weak(&g_clock, &cur, ns)) {}
}

static void take_cpu_sample(uint64_t cpu)
{
    t_cpu_sample = cpu;
    t_inside_ns = 0;
    t_credited_ns = 0;
    t_short_wall_ns = 0;
    t_calls = 0;
}

/* What a credit of `ns` gives once the debt is paid from it first. */
static uint64_t after_debt(uint64_t ns)
{
    uint64_t pay = ns < t_debt_ns ? ns : t_debt_ns;
    t_debt_ns -= pay;
    return ns - pay;
}

/* Real host time since the thread's previous call returned (see HS_SHORT_GAP_NS). */
static uint64_t host_time_since_last_call(void)
{
    uint64_t now = real_ns(CLOCK_MONOTONIC);
    uint64_t gap = now - t_mono_exit;
    t_mono_entry = now;
    if (t_mono_exit && gap < HS_SHORT_GAP_NS && ++t_calls < HS_SAMPLE_EVERY) {
        uint64_t give = after_debt(gap);
        t_short_wall_ns += gap;
        t_credited_ns += give;
        return give;
    }
    uint64_t cpu = real_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t spent = cpu > t_cpu_sample ? cpu - t_cpu_sample : 0, outside;
    if (t_mono_exit && gap < HS_SHORT_GAP_NS) {
        /* every gap of the window short: its CPU time splits between gaps and calls as their wall times do
         * (a thread preempted in the one was preempted in the other alike) */
        double out = (double)(t_short_wall_ns + gap), all = out + (double)t_inside_ns;
        outside = all > 0 ? (uint64_t)((double)spent * out / all) : 0;
    } else {
        outside = spent > t_inside_ns ? spent - t_inside_ns : 0; /* it may have blocked: CPU time alone counts */
    }
    uint64_t credited = t_credited_ns;
    take_cpu_sample(cpu);
    if (outside < credited) {
        t_debt_ns += credited - outside;
        return 0;
    }
    return after_debt(outside - credited);
}

void hs_clock_thread_was_idle(void)
{
    if (!g_sim || t_depth != 0)
        return;
    take_cpu_sample(real_ns(CLOCK_THREAD_CPUTIME_ID));
    t_mono_exit = real_ns(CLOCK_MONOTONIC);
}

void hs_client_enter(void)
{
    if (t_depth++ != 0 || !g_sim)
        return;
    hs_client_check_run();
    if (t_spin_outside) { /* its spin (sleep.c, sched_yield) is over: it waited, its CPU time there is not its work */
        take_cpu_sample(real_ns(CLOCK_THREAD_CPUTIME_ID));
        t_mono_exit = real_ns(CLOCK_MONOTONIC);
        hs_client_spin_return();
    }
    int mode = atomic_load_explicit(&g_mode, memory_order_acquire); /* publishes scale, fixed */
    switch (mode) {
    case HS_HOST_TIME_REAL:
    case HS_HOST_TIME_SCALED: {
        uint64_t d = host_time_since_last_call();
        if (mode == HS_HOST_TIME_SCALED)
            d = (uint64_t)llround((double)d * g_scale);
        atomic_fetch_add(&g_clock, d);
        break;
    }
    case HS_HOST_TIME_FIXED: atomic_fetch_add(&g_clock, g_fixed_ns); break;
    default: break;
    }
}

uint64_t hs_clock_sending_now(void)
{
    int mode = atomic_load_explicit(&g_mode, memory_order_acquire);
    if (t_depth == 0 && (mode == HS_HOST_TIME_REAL || mode == HS_HOST_TIME_SCALED)) {
        hs_client_enter(); /* credits the CPU time since the thread's last call, as a clock read would */
        hs_client_leave();
    }
    return hs_clock_now();
}

/* Whether the process runs under hysim in a mode that counts the calls' own cost (api_cost.h). */
static int charges_calls(void)
{
    if (!g_sim)
        return 0;
    int mode = atomic_load_explicit(&g_mode, memory_order_acquire);
    return mode == HS_HOST_TIME_REAL || mode == HS_HOST_TIME_SCALED || mode == HS_HOST_TIME_CALLS;
}

/* Charges `times` calls of the kind: at once outside an intercepted call, else when the outermost returns,
 * where only the first kind named counts unless `also` adds to it. */
static void charge(enum hs_api_call call, unsigned times, int also)
{
    if (!times || !charges_calls())
        return;
    uint64_t ns = hs_api_call_ns(call) * times;
    if (t_depth == 0)
        atomic_fetch_add(&g_clock, ns);
    else if (also || !t_call_ns)
        t_call_ns += ns;
}

void hs_client_charge_calls(enum hs_api_call call, unsigned times) { charge(call, times, 0); }

void hs_client_charge_call(enum hs_api_call call) { charge(call, 1, 0); }

void hs_client_charge_also(enum hs_api_call call, unsigned times) { charge(call, times, 1); }

uint64_t hs_clock_reach_ns(void)
{
    if (!charges_calls())
        return 0;
    return t_call_ns + HS_SUBMIT_NS; /* t_call_ns: still to be charged when the call returns */
}

void hs_clock_woke(uint64_t answer_ns)
{
    if (charges_calls())
        hs_clock_advance_to(answer_ns + HS_WAKE_NS);
}

void hs_client_leave(void)
{
    if (--t_depth != 0 || !g_sim)
        return;
    if (t_call_ns) { /* after the call: what it issued carries the clock at its entry */
        atomic_fetch_add(&g_clock, t_call_ns);
        t_call_ns = 0;
    }
    int mode = atomic_load_explicit(&g_mode, memory_order_relaxed);
    if (mode != HS_HOST_TIME_REAL && mode != HS_HOST_TIME_SCALED)
        return;
    uint64_t now = real_ns(CLOCK_MONOTONIC);
    uint64_t inside = now - t_mono_entry;
    if (inside >= HS_SHORT_GAP_NS)
        take_cpu_sample(real_ns(CLOCK_THREAD_CPUTIME_ID)); /* it may have blocked: not CPU time */
    else
        t_inside_ns += inside;
    t_mono_exit = now;
}

/*
 * A loop that waits for time to pass by reading the clock (spin until a
 * deadline) never ends where reads do not move the clock (host_time zero,
 * calls, fixed:0, scaled:0) and nothing else does: the thread runs, so the
 * simulation cannot pass its clock. A thread that has read the clock
 * HS_SPIN_READS times in a row at one reading, its process having issued
 * nothing meanwhile, spins: from then on each of its reads at that reading
 * moves the clock HS_SPIN_STEP_NS on (once told, on stderr), so the loop
 * ends within a step of its deadline. The same reads every run: it stays
 * deterministic. A program that only reads the clock between other work
 * never gets there.
 */
#define HS_SPIN_READS   100000u
#define HS_SPIN_STEP_NS 100u

static __thread hs_quiet_mark t_spin_mark; /* at this thread's last read */
static __thread unsigned t_spin_reads;     /* reads in a row at that reading, nothing issued */
static _Atomic int g_spin_told;

void hs_quiet_mark_take(hs_quiet_mark *m)
{
    m->host_ns = hs_clock_now();
    m->issued = hs_client_issued();
}

int hs_quiet_since(const hs_quiet_mark *m) { return m->host_ns == hs_clock_now() && m->issued == hs_client_issued(); }

static void note_clock_read(void)
{
    if (!hs_quiet_since(&t_spin_mark)) {
        hs_quiet_mark_take(&t_spin_mark);
        t_spin_reads = 0;
        return;
    }
    if (t_spin_reads < HS_SPIN_READS) {
        t_spin_reads++;
        return;
    }
    if (!atomic_exchange(&g_spin_told, 1))
        fprintf(stderr,
                "hysim: a thread read the clock %u times at one simulated time, nothing else happening: it waits "
                "for time to pass, which this host_time mode moves only by GPU waits, sleeps and call costs; "
                "its reads now move the clock %u ns each while it spins\n",
                HS_SPIN_READS, HS_SPIN_STEP_NS);
    t_spin_mark.host_ns = atomic_fetch_add(&g_clock, HS_SPIN_STEP_NS) + HS_SPIN_STEP_NS;
}

/* Reads the simulated clock as one intercepted call; `realtime` adds the epoch. */
static uint64_t read_clock(int realtime)
{
    if (t_spin_outside) /* a read inside a spin (sleep.c, sched_yield) is part of it: the clock the spin began at */
        return hs_clock_now() + (realtime ? atomic_load(&g_epoch_ns) : 0);
    hs_client_enter();
    note_clock_read();
    uint64_t v = hs_clock_now() + (realtime ? atomic_load(&g_epoch_ns) : 0);
    hs_client_leave();
    return v;
}

/* Whether clock id reads the simulated clock: 1 with the epoch added (real-time clocks), 0 without, -1 not at all. */
static int simulated_kind(clockid_t id)
{
    switch (id) {
    case CLOCK_MONOTONIC:
    case CLOCK_MONOTONIC_RAW:
    case CLOCK_MONOTONIC_COARSE:
    case CLOCK_BOOTTIME:
    case CLOCK_BOOTTIME_ALARM: return 0;
    case CLOCK_REALTIME:
    case CLOCK_REALTIME_COARSE:
    case CLOCK_REALTIME_ALARM:
    case CLOCK_TAI: return 1;
    default: /* CPU-time clocks and anything else */ return -1;
    }
}

int hs_clock_reads_simulated(clockid_t id) { return g_sim && simulated_kind(id) >= 0; }

uint64_t hs_clock_host_deadline(clockid_t id, const struct timespec *abstime)
{
    if (abstime->tv_sec < 0)
        return 0;
    if ((uint64_t)abstime->tv_sec >= UINT64_MAX / NS_PER_S - 1)
        return UINT64_MAX;
    uint64_t t = (uint64_t)abstime->tv_sec * NS_PER_S + (uint64_t)abstime->tv_nsec;
    uint64_t offset = simulated_kind(id) == 1 ? atomic_load(&g_epoch_ns) : 0;
    return t > offset ? t - offset : 0;
}

uint64_t hs_clock_real_ns(clockid_t id) { return real_ns(id); }

HS_API int clock_gettime(clockid_t id, struct timespec *ts)
{
    int realtime = simulated_kind(id);
    if (!g_sim || realtime < 0)
        return real_clock_gettime(id, ts);
    uint64_t v = read_clock(realtime);
    ts->tv_sec = (time_t)(v / NS_PER_S);
    ts->tv_nsec = (long)(v % NS_PER_S);
    return 0;
}

HS_API int gettimeofday(struct timeval *restrict tv, void *restrict tz)
{
    if (!g_sim)
        return real_gettimeofday(tv, tz);
    uint64_t v = read_clock(1);
    tv->tv_sec = (time_t)(v / NS_PER_S);
    tv->tv_usec = (suseconds_t)(v % NS_PER_S / 1000);
    if (tz)
        memset(tz, 0, sizeof(struct timezone));
    return 0;
}

HS_API time_t time(time_t *t)
{
    if (!g_sim)
        return real_time(t);
    time_t v = (time_t)(read_clock(1) / NS_PER_S);
    if (t)
        *t = v;
    return v;
}

HS_API int timespec_get(struct timespec *ts, int base)
{
    if (!g_sim || base != TIME_UTC)
        return real_timespec_get(ts, base);
    uint64_t v = read_clock(1);
    ts->tv_sec = (time_t)(v / NS_PER_S);
    ts->tv_nsec = (long)(v % NS_PER_S);
    return base;
}
