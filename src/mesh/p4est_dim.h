/** \file p4est_dim.h
 * The p4est headers of amrdlb, for 2D or 3D from one source: compiled with
 * P4_TO_P8 defined, p4est_to_p8est.h renames every p4est_ name to its
 * p8est_ twin and the p8est headers are used instead.  Every file that uses
 * the forest includes this one header rather than its own choice of
 * p4est headers under its own #ifndef P4_TO_P8. */
#ifndef AMR_MESH_P4EST_DIM_H
#define AMR_MESH_P4EST_DIM_H

#ifndef P4_TO_P8
#include <p4est.h>
#include <p4est_algorithms.h>
#include <p4est_bits.h>
#include <p4est_communication.h>
#include <p4est_connectivity.h>
#include <p4est_extended.h>
#include <p4est_geometry.h>
#include <p4est_ghost.h>
#include <p4est_iterate.h>
#include <p4est_lnodes.h>
#include <p4est_search.h>
#else
#include <p4est_to_p8est.h>
#include <p8est.h>
#include <p8est_algorithms.h>
#include <p8est_bits.h>
#include <p8est_communication.h>
#include <p8est_connectivity.h>
#include <p8est_extended.h>
#include <p8est_geometry.h>
#include <p8est_ghost.h>
#include <p8est_iterate.h>
#include <p8est_lnodes.h>
#include <p8est_search.h>
#endif

#endif
