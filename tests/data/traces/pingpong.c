/* LogGP parameters of an MPI library between two ranks (our own measurement code, issue 22).
 *
 *   mpirun -np 2 ./pingpong [reps]
 *
 * Prints CSV on stdout, header primitive,ranks,bytes,time (the input of `parsim fit-comm`):
 *   pingpong,2,m,t   t = half a round trip of an m-byte MPI_Send/MPI_Recv pair, the mean of a batch
 *   send_call,2,1,t  t = mean time inside MPI_Send(1 B) in a stream to a receiver that keeps up (o)
 *   stream,2,1,t     t = mean time between consecutive MPI_Send(1 B) calls' starts (g, at least o)
 * Each size gets `reps` rows (default 11), each one batch's mean. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int iters_for(long m) { return m <= 4096 ? 1000 : m <= 65536 ? 200 : 50; }

int main(int argc, char **argv) {
  int rank, size, reps = argc > 1 ? atoi(argv[1]) : 11;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) { if (!rank) fprintf(stderr, "run on 2 ranks\n"); MPI_Abort(MPI_COMM_WORLD, 1); }
  const long maxm = 1L << 20;
  char *buf = malloc(maxm);
  memset(buf, 1, maxm);
  if (!rank) printf("primitive,ranks,bytes,time\n");
  /* sizes 2^k and 3 2^k from 1 B to 1 MiB */
  for (long m = 1; m <= maxm; m = (m & (m - 1)) ? m / 3 * 4 : (m == 1 ? 2 : m / 2 * 3)) {
    int n = iters_for(m);
    for (int r = -1; r < reps; r++) { /* r = -1: warm-up batch, not printed */
      MPI_Barrier(MPI_COMM_WORLD);
      double t0 = MPI_Wtime();
      for (int i = 0; i < n; i++) {
        if (!rank) {
          MPI_Send(buf, m, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
          MPI_Recv(buf, m, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
          MPI_Recv(buf, m, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          MPI_Send(buf, m, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
      }
      double t = (MPI_Wtime() - t0) / (2.0 * n);
      if (!rank && r >= 0) printf("pingpong,2,%ld,%.9e\n", m, t);
    }
  }
  /* a stream of 1-byte sends, acknowledged every 100 messages so that the receiver keeps up */
  const int n = 10000, window = 100;
  for (int r = -1; r < reps; r++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double incall = 0, t0 = MPI_Wtime();
    for (int i = 0; i < n; i++) {
      if (!rank) {
        double a = MPI_Wtime();
        MPI_Send(buf, 1, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
        incall += MPI_Wtime() - a;
        if ((i + 1) % window == 0) MPI_Recv(buf, 0, MPI_BYTE, 1, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buf, 1, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if ((i + 1) % window == 0) MPI_Send(buf, 0, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
      }
    }
    double t = MPI_Wtime() - t0;
    if (!rank && r >= 0) {
      printf("send_call,2,1,%.9e\n", incall / n);
      printf("stream,2,1,%.9e\n", t / n);
    }
  }
  free(buf);
  MPI_Finalize();
  return 0;
}
