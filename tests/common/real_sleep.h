/*
 * real_sleep_us(us): real time passes while the thread is off the CPU, as
 * in a blocking read. Under hysim, nanosleep, usleep and sleep are sleeps
 * of the simulated clock (interpose/host/sleep.c); a test that means the machine's
 * time (stagger threads' arrival, let another process get ahead, stand for
 * blocked I/O) makes the system call itself, which nothing interposes.
 */
#ifndef HYSIM_TESTS_COMMON_REAL_SLEEP_H
#define HYSIM_TESTS_COMMON_REAL_SLEEP_H

#include <errno.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline void real_sleep_us(unsigned long long us)
{
    struct timespec left = {(time_t)(us / 1000000), (long)(us % 1000000) * 1000};
    while (syscall(SYS_clock_nanosleep, CLOCK_MONOTONIC, 0, &left, &left) != 0 && errno == EINTR) {}
}

#endif
