/*
 * The futex system call through libc's syscall(): a thread that issued work
 * and blocks in an untimed FUTEX_WAIT (or FUTEX_WAIT_BITSET matching any
 * bit) counts as blocked (docs/client.md, "Futexes").
 */
#undef syscall

#include <limits.h>
#include <linux/futex.h>
#include <stdarg.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "threads.h"

typedef long (*syscall_fn)(long, ...);

static _Atomic(syscall_fn) g_real_syscall;

static syscall_fn real_syscall(void)
{
    syscall_fn f = __atomic_load_n(&g_real_syscall, __ATOMIC_ACQUIRE);
    if (!f) {
        f = (syscall_fn)hs_next_symbol("syscall", NULL);
        __atomic_store_n(&g_real_syscall, f, __ATOMIC_RELEASE);
    }
    return f;
}

/*
 * A system call's six arguments, read from the variadic list as libc's
 * syscall reads them (x86-64 and AArch64 pass them as longs) whether or not
 * the caller passed all six: on x86-64 the sixth lies in the caller's stack
 * frame, which AddressSanitizer takes for an overflow, so the two variadic
 * functions are not instrumented (NO_ASAN).
 */
#define NO_ASAN __attribute__((no_sanitize("address")))
#define READ_ARGS(ap, a)                \
    do {                                \
        for (int i_ = 0; i_ < 6; i_++)  \
            (a)[i_] = va_arg(ap, long); \
    } while (0)

NO_ASAN HS_API long hs_client_own_syscall(long number, ...)
{
    long a[6];
    va_list ap;
    va_start(ap, number);
    READ_ARGS(ap, a);
    va_end(ap);
    return real_syscall()(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* A FUTEX_WAKE's arguments and, once made, its result. */
typedef struct futex_wake {
    long a[6];
    long rc;
} futex_wake;

static int wake_real(void *arg)
{
    futex_wake *w = arg;
    w->rc = real_syscall()(SYS_futex, w->a[0], w->a[1], w->a[2], w->a[3], w->a[4], w->a[5]);
    return 0; /* hs_client_release_and's "posted": the release was made either way */
}

/* Whether the futex word no longer holds the value a wait was given: the wait would not block. */
static int word_changed(void *arg)
{
    const long *a = arg;
    return __atomic_load_n((const uint32_t *)a[0], __ATOMIC_SEQ_CST) != (uint32_t)a[2];
}

/* An untimed FUTEX_WAIT of this process's futex: listed as blocked on its address until it returns. */
static long futex_wait(long a[6])
{
    hs_parked p;
    if (!hs_client_park(&p, (const void *)a[0], 0, word_changed, a)) {
        hs_client_unpark(&p);
        return real_syscall()(SYS_futex, a[0], a[1], a[2], a[3], a[4], a[5]); /* EAGAIN at once */
    }
    long rc;
    pthread_cleanup_push(hs_client_unpark_cancelled, &p);
    rc = real_syscall()(SYS_futex, a[0], a[1], a[2], a[3], a[4], a[5]); /* a cancellation point */
    pthread_cleanup_pop(0);
    hs_client_unpark(&p);
    return rc;
}

NO_ASAN HS_API long syscall(long number, ...)
{
    long a[6];
    va_list ap;
    va_start(ap, number);
    READ_ARGS(ap, a);
    va_end(ap);
    if (number == SYS_futex && hs_clock_simulated()) {
        int op = (int)(a[1] & FUTEX_CMD_MASK);
        /* a bitset op with every bit set is the plain op (Rust's std waits with one: rayon's idle workers) */
        int any_bits = (uint32_t)a[5] == FUTEX_BITSET_MATCH_ANY;
        if ((op == FUTEX_WAIT || (op == FUTEX_WAIT_BITSET && any_bits)) && a[3] == 0)
            return futex_wait(a);
        if (op == FUTEX_WAKE || (op == FUTEX_WAKE_BITSET && any_bits)) {
            futex_wake w = {{a[0], a[1], a[2], a[3], a[4], a[5]}, 0};
            if (a[2] > 0) /* up to a[2] woken; INT_MAX: all (release_and's 0) */
                hs_client_release_and((const void *)a[0], a[2] >= INT_MAX ? 0 : (unsigned)a[2], wake_real, &w);
            else
                wake_real(&w);
            return w.rc;
        }
    }
    return real_syscall()(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* Looked up before the program's threads run: a sanitizer's own threads must not allocate in a lookup. */
__attribute__((constructor)) static void futex_init(void) { real_syscall(); }
