// Option values of the example programs, read strictly: atoi reads "abc" as
// 0 and "8x" as 8, and a range check after the fact can only say "bad
// arguments". These name the option and what it wants, and exit with status
// 2 (a usage error), as an unknown option does.
#ifndef HYSIM_EXAMPLE_ARGS_H
#define HYSIM_EXAMPLE_ARGS_H

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>

// A whole number of at least `min` for option `opt` of program `prog`.
static inline int example_arg_int(const char *prog, const char *opt, const char *text, int min)
{
    char *end = nullptr;
    errno = 0;
    long v = std::strtol(text, &end, 10);
    if (end == text || *end != '\0' || errno == ERANGE || v < min || v > INT_MAX) {
        std::fprintf(stderr, "%s: %s: expected a whole number of at least %d, got \"%s\"\n", prog, opt, min, text);
        std::exit(2);
    }
    return (int)v;
}

// A number greater than 0 for option `opt` of program `prog`.
static inline double example_arg_positive(const char *prog, const char *opt, const char *text)
{
    char *end = nullptr;
    errno = 0;
    double v = std::strtod(text, &end);
    if (end == text || *end != '\0' || errno == ERANGE || !(v > 0) || !std::isfinite(v)) {
        std::fprintf(stderr, "%s: %s: expected a positive number, got \"%s\"\n", prog, opt, text);
        std::exit(2);
    }
    return v;
}

#endif
