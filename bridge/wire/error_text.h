/*
 * Error messages of the bridge: functions that can fail take a caller's
 * buffer (err, errlen) and write one line into it.
 */
#ifndef HYSIM_BRIDGE_ERROR_TEXT_H
#define HYSIM_BRIDGE_ERROR_TEXT_H

#include <stddef.h>

/* printf into err (NUL-terminated, truncated); nothing when err is NULL or errlen is 0. */
void hs_error_format(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
