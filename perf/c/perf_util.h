/* Shared bits of the C perf tools: argument parsing, error exits and the output lines that
   libzmq's perf tools print (the harness parses these exact lines). */
#ifndef OXMQ_PERF_UTIL_H
#define OXMQ_PERF_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <errno.h>
#include <stdint.h>

static inline void die (const char *what, const char *detail)
{
    fprintf (stderr, "error in %s: %s\n", what, detail);
    exit (1);
}

static inline long parse_count (const char *s, const char *name)
{
    char *end = NULL;
    long v = strtol (s, &end, 10);
    if (!end || *end || v < 0)
        die ("arguments", name);
    return v;
}

static inline double now_us (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return (double) ts.tv_sec * 1e6 + (double) ts.tv_nsec / 1e3;
}

static inline void print_throughput (long size, long count, double elapsed_us)
{
    if (elapsed_us <= 0)
        elapsed_us = 1;
    double throughput = (double) count / (elapsed_us / 1e6);
    double megabits = throughput * (double) size * 8 / 1e6;
    printf ("message size: %ld [B]\n", size);
    printf ("message count: %ld\n", count);
    printf ("mean throughput: %ld [msg/s]\n", (long) throughput);
    printf ("mean throughput: %.3f [Mb/s]\n", megabits);
}

/* One-way latency: half a round trip. */
static inline void print_latency (long size, long roundtrips, double elapsed_us)
{
    printf ("message size: %ld [B]\n", size);
    printf ("roundtrip count: %ld\n", roundtrips);
    printf ("average latency: %.3f [us]\n", elapsed_us / (2.0 * (double) roundtrips));
}

#endif
