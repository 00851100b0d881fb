/* osu_bw's method at one message size, as a reference for `ipcmark mpi
 * bandwidth`: rank 0 posts WINDOW MPI_Isend of SIZE bytes from one buffer
 * (as osu_bw does), rank 1 the matching MPI_Irecv into one buffer; both
 * MPI_Waitall, then rank 1 sends a 4-byte acknowledgement. After SKIP
 * windows of warm-up, each sample times ITERS windows with MPI_Wtime on rank
 * 0; rank 0 prints the median of SAMPLES samples as MB/s (10^6 B/s).
 * Nothing is checked: it is the lower bound of what checking costs. With
 * SLOTS=1 each message of a window has its own buffer, as ipcmark's (which
 * needs them: each message carries its own sequence number).
 *
 * usage: mpirun -n 2 mpi_bw [SIZE=8] [WINDOW=64] [ITERS=100] [SAMPLES=11] [SKIP=10] [SLOTS=0]
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
    int window = argc > 2 ? atoi(argv[2]) : 64;
    int iters = argc > 3 ? atoi(argv[3]) : 100;
    int samples = argc > 4 ? atoi(argv[4]) : 11;
    int skip = argc > 5 ? atoi(argv[5]) : 10;
    int slots = argc > 6 ? atoi(argv[6]) : 0;
    size_t stride = slots ? (size_t)(size > 0 ? size : 1) : 0;
    char *buf = malloc((size > 0 ? size : 1) * (slots ? (size_t)window : 1));
    memset(buf, 'a', (size_t)size * (slots ? (size_t)window : 1));
    MPI_Request *req = malloc(sizeof(MPI_Request) * window);
    double *mbps = malloc(sizeof(double) * samples);
    int ack = 0;
    for (int s = -1; s < samples; s++) {
        int n = s < 0 ? skip : iters;
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; i++) {
            if (rank == 0) {
                for (int w = 0; w < window; w++)
                    MPI_Isend(buf + w * stride, size, MPI_CHAR, 1, 100, MPI_COMM_WORLD, &req[w]);
                MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
                MPI_Recv(&ack, 1, MPI_INT, 1, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            } else if (rank == 1) {
                for (int w = 0; w < window; w++)
                    MPI_Irecv(buf + w * stride, size, MPI_CHAR, 0, 100, MPI_COMM_WORLD, &req[w]);
                MPI_Waitall(window, req, MPI_STATUSES_IGNORE);
                MPI_Send(&ack, 1, MPI_INT, 0, 101, MPI_COMM_WORLD);
            }
        }
        double t = MPI_Wtime() - t0;
        if (s >= 0)
            mbps[s] = (double)size * window * n / t / 1e6;
    }
    if (rank == 0) {
        qsort(mbps, samples, sizeof(double), cmp);
        printf("%.1f\n", mbps[samples / 2]);
    }
    MPI_Finalize();
    return 0;
}
