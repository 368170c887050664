/*
 * pthread_create and pthread_join, wrapped (threads.h says why).
 *
 * They are exported from libhysim.so without a symbol version, as the clock
 * functions are (host_clock.c): with LD_PRELOAD=libhysim.so, which `hysim run`
 * sets, they satisfy the program's (and libstdc++'s std::thread's) versioned
 * references to libc's, and call libc's own through dlsym(RTLD_NEXT), the
 * default version (a sanitizer runtime preloaded before us calls through to
 * us the same way). Without HYSIM_ENDPOINT both pass straight through.
 *
 * pthread_create starts the thread through a trampoline that lists its
 * record (so that a pthread_join can find it by pthread_t) and arms a
 * thread-specific destructor that tells the client core when it exits,
 * however it exits (return, pthread_exit, cancellation). The records of live
 * threads form a short list; a thread that has exited is not in it: a join
 * of it finds nothing to wait for, as none is needed (its exit was sent
 * before anything the joiner sends next). Nothing here allocates in the new
 * thread, which may run before a sanitizer runtime has set it up.
 */
#include <dlfcn.h>
#include <stdlib.h>

#include "threads.h"

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
typedef int (*join_fn)(pthread_t, void **);

static create_fn real_create; /* read and written with atomics */
static join_fn real_join;

static pthread_mutex_t g_tlock = PTHREAD_MUTEX_INITIALIZER;
static hs_thread *g_live;     /* records of live threads, newest first */
static uint64_t g_next_id = 1;
static pthread_key_t g_exit_key;
static int g_exit_key_ok;
static __thread hs_thread *t_self;

static void *next_symbol(const char *name) {
    void *p = dlsym(RTLD_NEXT, name);
    if (!p) { /* libhysim.so linked, not preloaded: libc comes before it */
        void *h = dlopen("libc.so.6", RTLD_LAZY | RTLD_NOLOAD);
        if (h) {
            p = dlsym(h, name);
            dlclose(h);
        }
    }
    return p;
}

static void resolve(void) {
    if (__atomic_load_n(&real_join, __ATOMIC_ACQUIRE))
        return;
    __atomic_store_n(&real_create, (create_fn)next_symbol("pthread_create"), __ATOMIC_RELEASE);
    __atomic_store_n(&real_join, (join_fn)next_symbol("pthread_join"), __ATOMIC_RELEASE);
}

/* Drops n references. */
static void unref_locked(hs_thread *t, int n) {
    t->refs -= n;
    if (t->refs == 0)
        free(t);
}

static void list_locked(hs_thread *t) {
    if (t->listed || t->gone)
        return;
    t->listed = 1;
    t->refs++;
    t->next = g_live;
    g_live = t;
}

/* Its thread is gone: never findable again. Drops the thread's reference and the list's. */
static void gone_locked(hs_thread *t) {
    int n = 1;
    t->gone = 1;
    if (t->listed) {
        hs_thread **pp = &g_live;
        while (*pp != t)
            pp = &(*pp)->next;
        *pp = t->next;
        t->listed = 0;
        n++;
    }
    unref_locked(t, n);
}

hs_thread *hs_thread_self(void) { return t_self; }

/* The thread-specific destructor: the thread exits. */
static void thread_exit(void *arg) {
    hs_thread *t = arg;
    hs_client_thread_exit(t);
    t_self = NULL;
    pthread_mutex_lock(&g_tlock);
    gone_locked(t);
    pthread_mutex_unlock(&g_tlock);
}

static void *trampoline(void *arg) {
    hs_thread *t = arg;
    void *(*start)(void *) = t->start;
    void *start_arg = t->arg;
    pthread_mutex_lock(&g_tlock);
    t->self = pthread_self();
    list_locked(t); /* before its creator may have: a join may come first */
    pthread_mutex_unlock(&g_tlock);
    t_self = t;
    if (pthread_setspecific(g_exit_key, t) != 0) { /* cannot happen with a valid key; never tell of it then */
        t_self = NULL;
        pthread_mutex_lock(&g_tlock);
        gone_locked(t);
        pthread_mutex_unlock(&g_tlock);
    }
    return start(start_arg);
}

int hs_thread_create_untracked(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg) {
    resolve();
    return real_create(thread, attr, start, arg);
}

HS_API int pthread_create(pthread_t *thread, const pthread_attr_t *attr, void *(*start)(void *), void *arg) {
    resolve();
    hs_thread *t = hs_clock_simulated() && g_exit_key_ok ? calloc(1, sizeof *t) : NULL;
    if (!t)
        return real_create(thread, attr, start, arg);
    t->start = start;
    t->arg = arg;
    t->refs = 2; /* its creator's, its thread's */
    pthread_mutex_lock(&g_tlock);
    t->id = g_next_id++;
    pthread_mutex_unlock(&g_tlock);
    hs_client_thread_created(t);
    int rc = real_create(thread, attr, trampoline, t);
    if (rc != 0) {
        hs_client_thread_exit(t);
        free(t);
        return rc;
    }
    pthread_mutex_lock(&g_tlock);
    t->self = *thread;
    list_locked(t);
    unref_locked(t, 1); /* the creator's */
    pthread_mutex_unlock(&g_tlock);
    return rc;
}

/* The live record of thread th, with a reference taken, or NULL. */
static hs_thread *find(pthread_t th) {
    pthread_mutex_lock(&g_tlock);
    hs_thread *t = g_live;
    while (t && !pthread_equal(t->self, th))
        t = t->next;
    if (t)
        t->refs++;
    pthread_mutex_unlock(&g_tlock);
    return t;
}

/* A join that will return at once (an error) must not wait for the thread's exit. */
static int joinable(pthread_t th) {
    if (pthread_equal(th, pthread_self()))
        return 0;
    pthread_attr_t a;
    int state = PTHREAD_CREATE_DETACHED;
    if (pthread_getattr_np(th, &a) == 0) {
        pthread_attr_getdetachstate(&a, &state);
        pthread_attr_destroy(&a);
    }
    return state == PTHREAD_CREATE_JOINABLE;
}

HS_API int pthread_join(pthread_t th, void **ret) {
    resolve();
    hs_thread *t = hs_clock_simulated() ? find(th) : NULL;
    int told = t && joinable(th) && hs_client_join_begin(t);
    int rc = real_join(th, ret);
    if (told)
        hs_client_join_end(t);
    if (t) {
        pthread_mutex_lock(&g_tlock);
        unref_locked(t, 1);
        pthread_mutex_unlock(&g_tlock);
    }
    return rc;
}

static void atfork_prepare(void) { pthread_mutex_lock(&g_tlock); }
static void atfork_parent(void) { pthread_mutex_unlock(&g_tlock); }
static void atfork_child(void) { pthread_mutex_unlock(&g_tlock); }

__attribute__((constructor)) static void threads_init(void) {
    resolve(); /* not lazily: dlsym may allocate, which a sanitizer's own thread start must not see */
    g_exit_key_ok = pthread_key_create(&g_exit_key, thread_exit) == 0;
    pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}
