/*
 * Error messages of the bridge (error_text.h).
 */
#include "error_text.h"

#include <stdarg.h>
#include <stdio.h>

void hs_error_format(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}
