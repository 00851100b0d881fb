/* osu_latency's method at one message size, as a reference for
 * `ipcmark mpi pingpong` (bench/osu_latency_compare.sh): rank 0 sends with
 * MPI_Send and waits with MPI_Recv, rank 1 receives and sends back, both
 * blocking; SKIP round trips of warm-up, then each sample times ITERS round
 * trips with MPI_Wtime and gives their mean one-way latency, round trip / 2
 * (osu_latency reports one such sample of 10000 at small sizes). Rank 0
 * prints the median of SAMPLES samples, in ns. Ranks beyond 1 only wait.
 *
 * usage: mpirun -n 2 mpi_latency [SIZE=8] [ITERS=10000] [SAMPLES=11] [SKIP=1000]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int size = argc > 1 ? atoi(argv[1]) : 8;
    int iters = argc > 2 ? atoi(argv[2]) : 10000;
    int samples = argc > 3 ? atoi(argv[3]) : 11;
    int skip = argc > 4 ? atoi(argv[4]) : 1000;
    char *sbuf = malloc(size > 0 ? size : 1), *rbuf = malloc(size > 0 ? size : 1);
    memset(sbuf, 'a', size);
    memset(rbuf, 'b', size);
    double *lat = calloc(samples, sizeof *lat);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int s = 0; s < samples; s++) {
        int n = (s == 0 ? skip : 0) + iters;
        double t0 = 0;
        for (int i = 0; i < n; i++) {
            if (i == n - iters) t0 = MPI_Wtime();
            if (rank == 0) {
                MPI_Send(sbuf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
                MPI_Recv(rbuf, size, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                MPI_Recv(rbuf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                MPI_Send(sbuf, size, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
            }
        }
        lat[s] = (MPI_Wtime() - t0) * 1e9 / (2.0 * iters);
    }
    if (rank == 0) {
        qsort(lat, samples, sizeof *lat, cmp);
        printf("%.1f\n", lat[samples / 2]);
    }
    free(sbuf);
    free(rbuf);
    free(lat);
    MPI_Finalize();
    return 0;
}
