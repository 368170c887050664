/*
 * CHECK(cond, fmt, ...), the C tests' one check: on failure it prints
 * "FILE:LINE: CHECK(cond) failed: " and the message, then ends the process
 * with status 1 (_exit, after flushing: safe in forked children too). A test
 * that would rather report every failed check of a run defines
 * HS_CHECK_COUNTS before including this header and a `static int failures`
 * that CHECK then counts into; it decides its exit status itself.
 * CHECK_COND(cond) is CHECK without a message of its own.
 */
#ifndef HYSIM_TESTS_COMMON_TEST_CHECK_H
#define HYSIM_TESTS_COMMON_TEST_CHECK_H

#include <stdio.h>
#include <unistd.h>

#ifdef HS_CHECK_COUNTS
#define HS_CHECK_FAILED() ((void)failures++)
#else
#define HS_CHECK_FAILED() (fflush(stderr), _exit(1))
#endif

#define CHECK(cond, ...)                                                             \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                            \
            fputc('\n', stderr);                                                     \
            HS_CHECK_FAILED();                                                       \
        }                                                                            \
    } while (0)

/* A check whose condition says all there is to say (its text is printed). */
#define CHECK_COND(cond) CHECK(cond, "%s", "")

#endif
