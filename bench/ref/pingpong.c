/*
 * Minimal pipe ping-pong: the reference ipcmark's `pipe` figure is checked against.
 *
 *   pingpong CLIENT_CPU SERVER_CPU SIZE ITERATIONS REPEATS
 *
 * Parent (client) and forked child (server) are pinned to the given CPUs; the
 * client writes SIZE bytes, the server reads and writes them back. Prints the
 * median over REPEATS of the one-way time in ns (round trip / 2), after a
 * warm-up of ITERATIONS round trips. Nothing else: no checks beyond the byte
 * counts, no loop-overhead subtraction (a few ns against microseconds).
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    if (sched_setaffinity(0, sizeof s, &s)) { perror("sched_setaffinity"); exit(1); }
}

static void xfer(int fd, char *buf, size_t n, int writing) {
    size_t done = 0;
    while (done < n) {
        ssize_t r = writing ? write(fd, buf + done, n - done) : read(fd, buf + done, n - done);
        if (r <= 0) exit(2);
        done += (size_t)r;
    }
}

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    if (argc != 6) { fprintf(stderr, "usage: pingpong CLIENT_CPU SERVER_CPU SIZE ITERATIONS REPEATS\n"); return 2; }
    int ccpu = atoi(argv[1]), scpu = atoi(argv[2]);
    size_t size = (size_t)atol(argv[3]);
    long iters = atol(argv[4]);
    int reps = atoi(argv[5]);
    int up[2], down[2];
    if (pipe(up) || pipe(down)) { perror("pipe"); return 1; }
    char *buf = calloc(1, size);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        pin(scpu);
        close(up[1]); close(down[0]);
        for (;;) { xfer(up[0], buf, size, 0); xfer(down[1], buf, size, 1); }
    }
    close(up[0]); close(down[1]);
    pin(ccpu);
    for (long i = 0; i < iters; i++) { xfer(up[1], buf, size, 1); xfer(down[0], buf, size, 0); }
    double *v = calloc((size_t)reps, sizeof *v);
    for (int r = 0; r < reps; r++) {
        long long t0 = now_ns();
        for (long i = 0; i < iters; i++) { xfer(up[1], buf, size, 1); xfer(down[0], buf, size, 0); }
        v[r] = (double)(now_ns() - t0) / (2.0 * (double)iters);
    }
    qsort(v, (size_t)reps, sizeof *v, cmp);
    printf("%.1f\n", v[reps / 2]);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return 0;
}
