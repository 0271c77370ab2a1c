/* LD_PRELOAD timer: prints, per rank, the time from MPI_Init's return to MPI_Finalize's entry
 * (the span a liballprof trace covers).  Fortran (mpif.h) and C entry points. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>
static double t0;
static int rank = -1;
static double now(void) { struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts); return ts.tv_sec + 1e-9 * ts.tv_nsec; }
static void report(void) { fprintf(stderr, "span rank %d %.6f s\n", rank, now() - t0); }
void pmpi_init_(int *ierr);
void pmpi_finalize_(int *ierr);
void mpi_init_(int *ierr) { pmpi_init_(ierr); PMPI_Comm_rank(MPI_COMM_WORLD, &rank); t0 = now(); }
void mpi_finalize_(int *ierr) { report(); pmpi_finalize_(ierr); }
int MPI_Init(int *c, char ***v) { int r = PMPI_Init(c, v); PMPI_Comm_rank(MPI_COMM_WORLD, &rank); t0 = now(); return r; }
int MPI_Finalize(void) { report(); return PMPI_Finalize(); }
