/*
 * Messages between the run's processes carry their sender's clock
 * (docs/time.md, "Messages"). A write to a pipe or a stream socket first
 * records the sender's host clock against the connection's direction in a
 * table every process of the run maps (HYSIM_MESSAGE_CLOCKS, a file hysim
 * run creates); a read that returns data moves the reader's clock to at
 * least the latest time recorded for the direction it read from. So a
 * process woken by another's message never reads a clock earlier than the
 * sender's when it sent.
 */
#include "message_clocks.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <stddef.h>
#include <unistd.h>

#include "internal.h"

/* Slots of the shared table: a direction's key (0: free) and the latest send time on it. */
#define HS_MESSAGE_SLOTS  8192u
#define HS_MESSAGE_PROBES 64u

typedef struct hs_message_slot {
    _Atomic uint64_t key;
    _Atomic uint64_t sent_ns;
} hs_message_slot;

/* Slot 0 is the overflow slot: directions that found no free slot share it (later, never earlier). */
static hs_message_slot *g_table;
static pthread_once_t g_once = PTHREAD_ONCE_INIT;

static void map_table(void)
{
    const char *path = getenv("HYSIM_MESSAGE_CLOCKS");
    if (!hs_clock_simulated() || !path || !*path)
        return;
    size_t bytes = HS_MESSAGE_SLOTS * sizeof(hs_message_slot);
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0 || ((size_t)st.st_size < bytes && ftruncate(fd, (off_t)bytes) < 0)) {
        fprintf(stderr,
                "hysim: note: cannot open %s (%s); messages between processes do not order their "
                "clocks\n",
                path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED) {
        fprintf(stderr,
                "hysim: note: cannot map %s (%s); messages between processes do not order their "
                "clocks\n",
                path, strerror(errno));
        return;
    }
    g_table = p;
}

/* FNV-1a, 64 bits, then mixed: the table's key (never 0). */
static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

static uint64_t finish(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return h ? h : 1;
}

/* An IPv4-mapped IPv6 address as its IPv4 form, so that both ends of a connection name it alike. */
static void normalise(struct sockaddr_storage *a)
{
    if (a->ss_family != AF_INET6)
        return;
    struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)a;
    if (!IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr))
        return;
    struct sockaddr_in s4 = {.sin_family = AF_INET, .sin_port = s6->sin6_port};
    memcpy(&s4.sin_addr, &s6->sin6_addr.s6_addr[12], 4);
    memset(a, 0, sizeof *a);
    memcpy(a, &s4, sizeof s4);
}

/* The bytes that name one end: family, address, port (IP) or path (Unix; empty when unnamed). */
static size_t end_name(const struct sockaddr_storage *a, socklen_t len, unsigned char *out)
{
    switch (a->ss_family) {
    case AF_INET: {
        const struct sockaddr_in *s = (const struct sockaddr_in *)a;
        memcpy(out, &s->sin_addr, 4);
        memcpy(out + 4, &s->sin_port, 2);
        return 6;
    }
    case AF_INET6: {
        const struct sockaddr_in6 *s = (const struct sockaddr_in6 *)a;
        memcpy(out, &s->sin6_addr, 16);
        memcpy(out + 16, &s->sin6_port, 2);
        return 18;
    }
    case AF_UNIX: {
        size_t off = offsetof(struct sockaddr_un, sun_path);
        size_t n = len > off ? len - off : 0;
        memcpy(out, ((const struct sockaddr_un *)a)->sun_path, n);
        return n;
    }
    default: return 0;
    }
}

/*
 * The key of the direction fd sends on (outgoing) or reads from: a pipe's
 * inode; a stream socket's (from, to) ends. 0 for anything else (files,
 * datagram sockets, Unix sockets both of whose ends are unnamed).
 */
static uint64_t direction_key(int fd, const struct stat *st, int outgoing)
{
    if (S_ISFIFO(st->st_mode)) {
        uint64_t h = hash_bytes(0xcbf29ce484222325ull, "pipe", 4);
        h = hash_bytes(h, &st->st_dev, sizeof st->st_dev);
        return finish(hash_bytes(h, &st->st_ino, sizeof st->st_ino));
    }
    if (!S_ISSOCK(st->st_mode))
        return 0;
    int type;
    socklen_t tlen = sizeof type;
    if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen) < 0 || type != SOCK_STREAM)
        return 0;
    struct sockaddr_storage self, peer;
    socklen_t slen = sizeof self, plen = sizeof peer;
    memset(&self, 0, sizeof self);
    memset(&peer, 0, sizeof peer);
    if (getsockname(fd, (struct sockaddr *)&self, &slen) < 0 || getpeername(fd, (struct sockaddr *)&peer, &plen) < 0)
        return 0;
    normalise(&self);
    normalise(&peer);
    unsigned char from[sizeof(struct sockaddr_storage)], to[sizeof(struct sockaddr_storage)];
    size_t nfrom = outgoing ? end_name(&self, slen, from) : end_name(&peer, plen, from);
    size_t nto = outgoing ? end_name(&peer, plen, to) : end_name(&self, slen, to);
    if (self.ss_family == AF_UNIX && nfrom == 0 && nto == 0)
        return 0; /* a socketpair: nothing names it alike at both ends */
    uint64_t h = hash_bytes(0xcbf29ce484222325ull, &self.ss_family, sizeof self.ss_family);
    h = hash_bytes(h, &nfrom, sizeof nfrom);
    h = hash_bytes(h, from, nfrom);
    return finish(hash_bytes(h, to, nto));
}

/* The slot of key, claimed if new; the overflow slot when the probes find none. */
static hs_message_slot *slot_of(uint64_t key, int claim)
{
    for (unsigned i = 0; i < HS_MESSAGE_PROBES; i++) {
        hs_message_slot *s = &g_table[1 + (key + i) % (HS_MESSAGE_SLOTS - 1)];
        uint64_t k = atomic_load(&s->key);
        if (k == key)
            return s;
        if (k == 0) {
            if (!claim)
                return NULL;
            if (atomic_compare_exchange_strong(&s->key, &k, key) || k == key)
                return s;
        }
    }
    return &g_table[0];
}

/*
 * The key of fd's direction when hysim watches it: the run's table is
 * there, fd is not the connection to hysimd, and the thread is not already
 * here (the table's set-up may print, and printing writes).
 */
static __thread int t_here;

static uint64_t watched_key(int fd, const struct stat *st, int outgoing)
{
    if (!hs_clock_simulated() || fd < 0 || t_here)
        return 0;
    t_here = 1;
    pthread_once(&g_once, map_table);
    uint64_t key = g_table && fd != hs_client_connection_fd() ? direction_key(fd, st, outgoing) : 0;
    t_here = 0;
    return key;
}

void hs_messages_sending(int fd, const struct stat *st)
{
    uint64_t key = watched_key(fd, st, 1);
    if (!key)
        return;
    uint64_t now = hs_clock_sending_now();
    hs_message_slot *s = slot_of(key, 1);
    uint64_t cur = atomic_load(&s->sent_ns);
    while (cur < now && !atomic_compare_exchange_weak(&s->sent_ns, &cur, now)) {}
}

void hs_messages_received(int fd, const struct stat *st, ssize_t n)
{
    uint64_t key = n > 0 ? watched_key(fd, st, 0) : 0;
    if (!key)
        return;
    hs_message_slot *s = slot_of(key, 0); /* NULL: nothing simulated ever sent on it */
    if (s)
        hs_clock_advance_to(atomic_load(&s->sent_ns));
}
