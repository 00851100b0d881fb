/*
 * Plain C loop of syscall(SYS_getpid): the reference ipcmark's syscall-getpid
 * figure is checked against.
 *
 *   getpid CPU SAMPLE_MS SAMPLES
 *
 * Pins itself to CPU, warms up and calibrates the iteration count so that one
 * sample lasts about SAMPLE_MS (as ipcmark does), times SAMPLES samples, and
 * prints the median ns per call on stdout. Like ipcmark, it subtracts its own
 * loop overhead: the same loop with an empty body (a compiler barrier), best of
 * 7 runs; the raw median and that overhead go to stderr. The call goes through
 * glibc's syscall(), as in ipcmark, so both pay the same wrapper.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long calls(long n) {
    pid_t want = getpid();
    long long t0 = now_ns();
    for (long i = 0; i < n; i++)
        if (syscall(SYS_getpid) != want) { fprintf(stderr, "getpid returned a wrong pid\n"); exit(1); }
    return now_ns() - t0;
}

static long long empty(long n) {
    long long t0 = now_ns();
    for (long i = 0; i < n; i++) __asm__ volatile("" ::: "memory");
    return now_ns() - t0;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 4) { fprintf(stderr, "usage: getpid CPU SAMPLE_MS SAMPLES\n"); return 2; }
    int cpu = atoi(argv[1]);
    double sample_ns = atof(argv[2]) * 1e6;
    int samples = atoi(argv[3]);
    if (samples < 1 || sample_ns <= 0) { fprintf(stderr, "bad arguments\n"); return 2; }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set)) { perror("sched_setaffinity"); return 1; }

    /* Warm-up and calibration: 100 ms, as ipcmark's default. */
    long n = 1;
    long long spent = 0, t;
    double per_call;
    for (;;) {
        t = calls(n);
        spent += t;
        if (spent >= 100000000LL && t >= 100000000LL / 8) { per_call = (double)t / n; break; }
        if (t < 100000000LL / 4) n *= 2;
    }
    long iters = (long)(sample_ns / per_call) + 1;

    long long best = -1;
    for (int r = 0; r < 7; r++) {
        long long e = empty(100000);
        if (best < 0 || e < best) best = e;
    }
    double loop_ns = (double)best / 100000;

    double *v = calloc((size_t)samples, sizeof *v);
    for (int r = 0; r < samples; r++) v[r] = (double)calls(iters) / iters;
    qsort(v, (size_t)samples, sizeof *v, cmp);
    double med = v[samples / 2];
    if (samples % 2 == 0) med = (v[samples / 2 - 1] + v[samples / 2]) / 2;
    fprintf(stderr, "raw median %.2f ns, empty loop %.3f ns, %ld calls per sample\n", med, loop_ns, iters);
    printf("%.2f\n", med - loop_ns);
    return 0;
}
