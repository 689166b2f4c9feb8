/* The task mesh of Lieber et al. 2016 and its callbacks for the task set.  Task ids
 * and block homes are arithmetic, so every process knows any task's
 * neighbours and home without storing the mesh. */
#include "bench/taskmesh.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/scenario.h"

#define TASKS_PER_RANK_SIDE 8 /* Lieber et al. 2016: 8 x 8 x 8 tasks per node */

static void coords(const lb_taskmesh *tm, int id, int c[3])
{
  c[0] = id % tm->T[0];
  c[1] = (id / tm->T[0]) % tm->T[1];
  c[2] = id / (tm->T[0] * tm->T[1]);
}

static int mesh_neighbours(const void *ctx, int id, int *nbr)
{
  const lb_taskmesh *tm = ctx;
  int c[3], k = 0, stride = 1;
  coords(tm, id, c);
  for (int d = 0; d < 3; d++) {
    if (c[d] > 0) nbr[k++] = id - stride;
    if (c[d] + 1 < tm->T[d]) nbr[k++] = id + stride;
    stride *= tm->T[d];
  }
  return k;
}

static int mesh_home(const void *ctx, int id, int *index)
{
  const lb_taskmesh *tm = ctx;
  int c[3];
  coords(tm, id, c);
  const int *b = tm->b, *P = tm->P;
  *index = c[0] % b[0] + b[0] * (c[1] % b[1] + b[1] * (c[2] % b[2]));
  return c[0] / b[0] + P[0] * (c[1] / b[1] + P[1] * (c[2] / b[2]));
}

static lb_err mesh_initial(const void *ctx, int r, lb_task_list *list)
{
  const lb_taskmesh *tm = ctx;
  const int *b = tm->b, *T = tm->T;
  int o[3] = {b[0] * (r % tm->P[0]), b[1] * ((r / tm->P[0]) % tm->P[1]), b[2] * (r / (tm->P[0] * tm->P[1]))};
  for (int z = o[2]; z < o[2] + b[2]; z++)
    for (int y = o[1]; y < o[1] + b[1]; y++)
      for (int x = o[0]; x < o[0] + b[0]; x++) {
        int id = x + T[0] * (y + T[1] * z);
        double xc[3] = {x + 0.5, y + 0.5, z + 0.5};
        lb_err err = lb_task_list_add(list, id, tm->w[id], xc);
        if (err) return err;
      }
  return LB_OK;
}

lb_err lb_taskmesh_create(const lb_graph *g, const char *tasks, const char *scenario, double base,
                          lb_taskmesh *tm, lb_task_graph *tg)
{
  memset(tm, 0, sizeof *tm);
  if (g->kind != LB_GRAPH_MESH3D)
    return lb_error(LB_ERR_GRAPH, "-tasks maps a 3D task mesh onto a 3D mesh of ranks: give -graph mesh3d:AxBxC, not '%s'", g->spec);
  for (int d = 0; d < 3; d++) tm->P[d] = g->dims[d];
  if (!tasks || !tasks[0]) {
    for (int d = 0; d < 3; d++) tm->T[d] = TASKS_PER_RANK_SIDE * tm->P[d];
  } else {
    const char *s = tasks;
    for (int d = 0; d < 3; d++) {
      char *end;
      errno = 0;
      long v = strtol(s, &end, 10);
      if (end == s || errno || v < 1 || v > 1 << 20 || (d < 2 ? *end != 'x' : *end != '\0'))
        return lb_error(LB_ERR_ARG, "-tasks '%s': expected AxBxC with positive integers", tasks);
      tm->T[d] = (int)v;
      s = end + 1;
    }
  }
  long long nt = (long long)tm->T[0] * tm->T[1] * tm->T[2];
  if (nt > (1LL << 30)) return lb_error(LB_ERR_ARG, "-tasks %dx%dx%d: more than 2^30 tasks", tm->T[0], tm->T[1], tm->T[2]);
  for (int d = 0; d < 3; d++) {
    if (tm->T[d] % tm->P[d])
      return lb_error(LB_ERR_ARG, "-tasks %dx%dx%d does not split into equal blocks on the ranks of '%s' (%d tasks over %d ranks in dimension %d)",
                      tm->T[0], tm->T[1], tm->T[2], g->spec, tm->T[d], tm->P[d], d + 1);
    tm->b[d] = tm->T[d] / tm->P[d];
  }
  int per_rank = tm->b[0] * tm->b[1] * tm->b[2];
  tm->w = malloc((size_t)nt * sizeof *tm->w);
  double *load = malloc((size_t)g->n * sizeof *load);
  lb_err err = LB_OK;
  if (!tm->w || !load) err = lb_error(LB_ERR_MEM, "out of memory for %lld tasks", nt);
  else if (strncmp(scenario, "file:", 5) == 0) {
    char what[128];
    snprintf(what, sizeof what, "the %lld tasks of the %dx%dx%d task mesh", nt, tm->T[0], tm->T[1], tm->T[2]);
    err = lb_read_values(scenario + 5, (int)nt, what, tm->w);
  } else if (!(err = lb_scenario_loads(g, scenario, base > 0 ? base : per_rank, load))) {
    for (long long id = 0; id < nt; id++) {
      int idx;
      tm->w[id] = load[mesh_home(tm, (int)id, &idx)] / per_rank;
    }
  }
  free(load);
  if (err) {
    lb_taskmesh_free(tm);
    return err;
  }
  *tg = (lb_task_graph){(int)nt, g->n, 6, mesh_neighbours, mesh_home, mesh_initial, tm};
  return LB_OK;
}

void lb_taskmesh_free(lb_taskmesh *tm)
{
  free(tm->w);
  tm->w = NULL;
}
