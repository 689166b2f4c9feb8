/* Private to methods/: the first-order parameter alpha shared by
 * first-order, second-order and chemotaxis diffusion (Lieber et al. 2016 OD, SO, CT). */
#ifndef AMRDLB_DIFFUSION_H
#define AMRDLB_DIFFUSION_H

#include "balance/balance.h"

/** The alpha to use on g for the option value opt (0: the default; else
 *  checked against the stability bound 1/max degree). */
lb_err lb_diffusion_alpha(const lb_graph *g, double opt, double *alpha);

#endif
