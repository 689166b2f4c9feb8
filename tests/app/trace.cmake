# ==== the load trace (-trace_loads) and lbbench's replays of it ====
# -trace_loads and lbbench -scenario trace (src/app/FORMATS.md, "The load trace"): every
# cycle the app balanced, replayed on as many ranks with its method and
# weights, gives the app's cuts, migrated cells and iteration counts
# exactly, on the virtual and the MPI backend (sfc-shift: its sequence on
# the ranks' measured times); sfc and sfc-shift also tiled 3 times on 3x
# the ranks (the app's cuts, 3 times); a restart continues the trace after
# its checkpoint's last cycle.  The darcy run's trace is the bad-input
# tests' fixture.  The sfc run stops at t 0.02 (9 cycles, where the 16 to
# t 0.04 took twice as long) and balances every cycle (the mission's options
# without its -lb_threshold): with its model costs 1,4 the phase model
# predicts sfc's cut worse than the kept one, which the threshold's rule
# refuses (no_gain), and the carry check needs cuts applied; second-order's
# timing rule balances fewer (2 of 9 under load), so its run keeps the 16.
set(tdir ${CMAKE_CURRENT_BINARY_DIR}/trace)
set(tcheck ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/trace_check.py --mpiexec "${MPIEXEC_EXECUTABLE} ${AMRDLB_MPIEXEC_PREFLAGS}"
  --lbbench $<TARGET_FILE:lbbench>)
amrdlb_add_test(NAME trace_roundtrip_darcy2d_second_order_np2 RANKS 2 LABELS app mpi trace
  COMMAND ${tcheck} roundtrip --amr ${amr2d} --dir ${tdir}/darcy2d --damage -- -options_file config/lb-darcy-transport.opts -t_final 0.04)
set_tests_properties(trace_roundtrip_darcy2d_second_order_np2 PROPERTIES FIXTURES_SETUP trace_bad)
amrdlb_add_test(NAME trace_roundtrip_darcy2d_sfc_np2 RANKS 2 LABELS app mpi trace
  COMMAND ${tcheck} roundtrip --amr ${amr2d} --dir ${tdir}/darcy2d_sfc --replicate 3 --
          -problem darcy-transport -amr_min_level 5 -amr_max_level 8 -adv_degree 1 -adv_limiter -adv_load_threshold 0.1 -amr_interval 7
          -t_final 0.02 -lb_method sfc -lb_weights model -lb_cost 1,4)
amrdlb_add_test(NAME trace_roundtrip_darcy2d_sfc_shift_np2 RANKS 2 LABELS app mpi trace
  COMMAND ${tcheck} roundtrip --amr ${amr2d} --dir ${tdir}/darcy2d_shift --replicate 3 --
          -options_file config/lb-darcy-transport.opts -t_final 0.015 -lb_method sfc-shift)
amrdlb_add_test(NAME trace_roundtrip_linear3d_diffusion_np2 RANKS 2 LABELS app mpi trace
  COMMAND ${tcheck} roundtrip --amr ${amr3d} --dir ${tdir}/linear3d --tasks -- -problem linear -amr_min_level 2 -amr_cycles 4 -lb_method diffusion)
amrdlb_add_test(NAME trace_roundtrip_linear3d_sfc_np2 RANKS 2 LABELS app mpi trace
  COMMAND ${tcheck} roundtrip --amr ${amr3d} --dir ${tdir}/linear3d_sfc --replicate 3 -- -problem linear -amr_min_level 2 -amr_cycles 4 -lb_method sfc)
amrdlb_add_test(NAME trace_roundtrip_linear3d_sfc_shift_np2 RANKS 2 LABELS app mpi trace
  COMMAND ${tcheck} roundtrip --amr ${amr3d} --dir ${tdir}/linear3d_shift -- -problem linear -amr_min_level 2 -amr_cycles 4 -lb_method sfc-shift)
# -lb_weights phases: every cell's weight in every modelled phase, the fits' costs
amrdlb_add_test(NAME trace_roundtrip_darcy2d_phases_np2 RANKS 2 LABELS app mpi trace
  COMMAND ${tcheck} roundtrip --amr ${amr2d} --dir ${tdir}/darcy2d_phases --
          -problem darcy-transport -amr_min_level 4 -amr_max_level 6 -t_final 0.03 -lb_method sfc -lb_weights phases)
amrdlb_add_test(NAME trace_restart_np2 RANKS 2 LABELS app mpi trace restart
  COMMAND ${tcheck} restart --amr ${amr2d} --dir ${tdir}/restart -- -problem linear -amr_min_level 3 -amr_cycles 6 -lb_method diffusion)

# lbbench -offload: a recorded reactive run's cells (measured weights,
# without the offload, so a cell weighs its reaction) as the items of
# lboffload.h on P ranks of an even split: the same plan item for item on
# the virtual and the MPI backend (4 ranks), and at 131072 virtual ranks
# (the trace refined 6 times: about 28 cells a rank) its time and memory per
# rank stay small (check_offload_bench.py).
set(odir ${CMAKE_CURRENT_BINARY_DIR}/offload)
file(MAKE_DIRECTORY ${odir})
amrdlb_add_test(NAME offload_trace_record LABELS app mpi trace OUTPUTS ${odir}/rt.trace NPROCS 2
  COMMAND ${amr2d} -options_file config/reactive-transport.opts -t_final 0.03 -react_offload 0 -lb_weights measured -trace_loads ${odir}/rt.trace)
set(lbbench_offload $<TARGET_FILE:lbbench> -chain -offload -scenario trace:${odir}/rt.trace -trace_split even)
amrdlb_add_test(NAME offload_bench_virtual_p4 LABELS trace OUTPUTS ${odir}/virtual4.jsonl READS offload_trace_record
  COMMAND ${lbbench_offload} -virtual -graph line:4 -json ${odir}/virtual4.jsonl)
amrdlb_add_test(NAME offload_bench_mpi_np4 LABELS trace mpi OUTPUTS ${odir}/mpi4.jsonl READS offload_trace_record NPROCS 4
  COMMAND ${lbbench_offload} -graph line:4 -json ${odir}/mpi4.jsonl)
amrdlb_add_test(NAME offload_bench_parity LABELS trace READS "offload_bench_virtual_p4;offload_bench_mpi_np4"
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_offload_bench.py parity ${odir}/virtual4.jsonl ${odir}/mpi4.jsonl
  PASS_REGEX "the same plan on both backends")
amrdlb_add_test(NAME offload_bench_131072 LABELS trace OUTPUTS ${odir}/scale.jsonl READS offload_trace_record
  COMMAND ${lbbench_offload} -virtual -graph line:131072 -refine 6 -json ${odir}/scale.jsonl)
amrdlb_add_test(NAME offload_bench_131072_check LABELS trace READS offload_bench_131072
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_offload_bench.py scale ${odir}/scale.jsonl
  PASS_REGEX "131072 ranks: max/mean [0-9.]+ -> [0-9.]+")
# lbbench -offload's bad input: one line naming the option, on 1 and 2 ranks.
set(_ot trace:${odir}/rt.trace)
amrdlb_add_bad_inputs(PREFIX offload_bench_bad_ LABELS trace READS offload_trace_record CASES
  "no_chain|lbbench|-virtual,-offload,-graph,line:4,-scenario,${_ot}|-offload runs in chain mode \\(-chain\\) instead of a method"
  "method|lbbench|-virtual,-chain,-offload,-graph,line:4,-scenario,${_ot},-lb_method,sfc|-offload runs in chain mode \\(-chain\\) instead of a method: give no -lb_method"
  "ring|lbbench|-virtual,-chain,-offload,-graph,ring:4,-scenario,${_ot}|-offload runs on the ranks along the curve: give -graph line:P, not 'ring:4'"
  "scenario|lbbench|-virtual,-chain,100,-offload,-graph,line:4,-scenario,point:0:4|-offload replays a load trace: give -scenario trace:FILE\\[:CYCLE\\], not 'point:0:4'"
  "processes|lbbench|-chain,-offload,-graph,line:3,-scenario,${_ot}|graph 'line:3' has 3 ranks but the MPI backend runs on [12] processes")

# lbbench -chain -step: the app's balancing step with -lb_weights phases
# (the fit, the phase choice, sfc, the decision; the library's calls) on a
# recorded reactive run at 16384 virtual ranks (the trace refined 5 times:
# about 60 cells a rank): the choice's prefix-sum model equals the model of
# the cut sfc realises, and the step's time, memory and collectives per
# rank stay within issue 41's budget (check_step_bench.py).
amrdlb_add_test(NAME step_trace_record LABELS app mpi trace OUTPUTS ${odir}/rt_phases.trace NPROCS 2
  COMMAND ${amr2d} -options_file config/reactive-transport.opts -t_final 0.03 -lb_weights phases -trace_loads ${odir}/rt_phases.trace)
amrdlb_add_test(NAME step_bench_16384 LABELS trace OUTPUTS ${odir}/step.jsonl READS step_trace_record
  COMMAND $<TARGET_FILE:lbbench> -chain -step -virtual -graph line:16384 -scenario trace:${odir}/rt_phases.trace -refine 5 -lb_method sfc -json ${odir}/step.jsonl)
amrdlb_add_test(NAME step_bench_16384_check LABELS trace READS step_bench_16384
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_step_bench.py ${odir}/step.jsonl
  PASS_REGEX "16384 ranks: model [0-9.e+-]+ -> [0-9.e+-]+")
# lbbench -step's bad input: one line naming the option.
set(_st trace:${odir}/rt_phases.trace)
amrdlb_add_bad_inputs(PREFIX step_bench_bad_ LABELS trace READS "step_trace_record;offload_trace_record" CASES
  "no_virtual|lbbench|-chain,-step,-graph,line:4,-scenario,${_st},-lb_method,sfc|-step replays the app's step in chain mode on the virtual backend"
  "graph|lbbench|-virtual,-chain,-step,-graph,mesh2d:2x2,-scenario,${_st},-lb_method,sfc|-step runs on the ranks along the curve: give -graph line:P or ring:P"
  "no_phases|lbbench|-virtual,-chain,-step,-graph,line:4,-scenario,${_ot},-lb_method,sfc|-step: -scenario trace:.*: cycle [0-9]+ holds no phase weights")

# The cells' face adjacency rebuilt from a trace with the coarse mesh
# alone equals the forest's (p4est_mesh), across trees and hanging faces,
# 2D and 3D, on 1 and 2 ranks (trace_adjacency.c).
amrdlb_add_test_programs(amrdlb_app trace_adjacency)
file(MAKE_DIRECTORY ${tdir})
foreach(np 1 2)
  amrdlb_add_test(NAME trace_adjacency_lshape2d_np${np} LABELS app trace NPROCS ${np}
    COMMAND $<TARGET_FILE:trace_adjacency2d> ${PROJECT_SOURCE_DIR}/meshes/lshape.inp 1 ${tdir} PASS_REGEX "adjacency check passed")
  amrdlb_add_test(NAME trace_adjacency_fichera3d_np${np} LABELS app trace NPROCS ${np}
    COMMAND $<TARGET_FILE:trace_adjacency3d> ${PROJECT_SOURCE_DIR}/meshes/fichera.inp 0 ${tdir} PASS_REGEX "adjacency check passed")
endforeach()

# lbbench task mode as the papers run it (-tasks trace -mesh, -graph
# subdomains:P): the task edges are p4est_mesh's face-neighbour pairs of a
# forest on a multi-tree mesh, the subdomain graph and cut task edges of
# the app's split are the ones the app measured (comm_edges, edge_cut),
# weight is conserved, and a carried start balanced on the subdomain graph
# is identical on the virtual backend and on 2 and 4 MPI ranks
# (trace_check.py mesh).
amrdlb_add_test(NAME trace_tasks_mesh_lshape2d_np4 LABELS app mpi trace
  COMMAND ${tcheck} mesh --amr ${amr2d} --adjacency $<TARGET_FILE:trace_adjacency2d> --mesh ${PROJECT_SOURCE_DIR}/meshes/lshape.inp --level 1
          --ranks 4 --dir ${tdir}/mesh2d -- -problem lshape -amr_cycles 4
  PASS_REGEX "mesh check passed")
amrdlb_add_test(NAME trace_tasks_mesh_fichera3d_np4 LABELS app mpi trace
  COMMAND ${tcheck} mesh --amr ${amr3d} --adjacency $<TARGET_FILE:trace_adjacency3d> --mesh ${PROJECT_SOURCE_DIR}/meshes/fichera.inp --level 0
          --ranks 4 --dir ${tdir}/mesh3d -- -problem lshape -amr_min_level 0 -amr_cycles 4 -degree 1
  PASS_REGEX "mesh check passed")
set_tests_properties(trace_tasks_mesh_lshape2d_np4 trace_tasks_mesh_fichera3d_np4 PROPERTIES PROCESSORS 2)

# Bad traces and trace options: one error line, 1 and 2 ranks.
set(good trace:${tdir}/darcy2d/good.trace)
set(v1 trace:${tdir}/darcy2d/v1.trace)
set(chain -virtual,-chain,-lb_method,sfc)
set(tmesh -virtual,-tasks,trace,-lb_method,diffusion,-lb_max_iters,10)
set(cases
  "missing|lbbench|${chain},-graph,line:2,-scenario,trace:${tdir}/none.trace|trace '.*/none.trace': cannot open: No such file"
  "not_trace|lbbench|${chain},-graph,line:2,-scenario,trace:config/lb-darcy-transport.opts|trace 'config/lb-darcy-transport.opts': not a load trace"
  "truncated|lbbench|${chain},-graph,line:2,-scenario,trace:${tdir}/darcy2d/truncated.trace|trace '.*/truncated.trace': truncated: cycle [0-9]+ needs [0-9]+ bytes"
  "version|lbbench|${chain},-graph,line:2,-scenario,trace:${tdir}/darcy2d/version.trace|trace '.*/version.trace': version 3, this lbbench reads versions 1 to 2"
  "nan_centre|lbbench|${chain},-graph,line:2,-scenario,trace:${tdir}/darcy2d/nan_centre.trace|trace '.*/nan_centre.trace': cell 0 of cycle [0-9]+ has centre coordinate 0 nan"
  "cycle|lbbench|${chain},-graph,line:2,-scenario,${good}:99|trace '.*/good.trace': no cycle 99 \\(the last is [0-9]+\\)"
  "ranks|lbbench|${chain},-graph,line:100000,-scenario,${good}|trace cycle [0-9]+: 100000 ranks for its [0-9]+ cells \\(x 1 copies\\)"
  "ranks_tasks|lbbench|-virtual,-tasks,trace,-lb_method,zoltan-rcb,-graph,mesh2d:400x400,-scenario,${good}|trace cycle [0-9]+: 160000 ranks for its [0-9]+ cells"
  "replicate|lbbench|${chain},-graph,line:2,-scenario,${good},-replicate,0|-replicate 0: must be at least 1"
  "chain_value|lbbench|-virtual,-chain,10,-lb_method,sfc,-graph,line:2,-scenario,${good}|-chain takes no value with -scenario trace"
  "mode|lbbench|-virtual,-lb_method,sfc,-graph,line:2,-scenario,${good}|-scenario trace replays in chain mode \\(-chain\\) or task mode \\(-tasks trace\\)"
  "split|lbbench|${chain},-graph,line:2,-scenario,${good},-trace_split,uneven|option -trace_split uneven: unknown initial split .choose from carry, app, even."
  "tasks_graph|lbbench|-virtual,-tasks,trace,-lb_method,zoltan-rcb,-graph,line:4,-scenario,${good}|-tasks trace places the cells on a mesh of ranks"
  "tasks_3d|lbbench|-virtual,-tasks,trace,-lb_method,zoltan-rcb,-graph,mesh3d:2x2x2,-scenario,${good}|-tasks trace: a 2D trace goes on mesh2d ranks"
  # a version 1 trace has no cell positions: no -refine, no carried split
  "refine_v1|lbbench|${chain},-graph,line:2,-scenario,${v1},-trace_split,app,-refine,1|-refine 1: trace '.*/v1.trace' is format version 1, which records no cell positions"
  "refine_v1_tasks|lbbench|-virtual,-tasks,trace,-lb_method,zoltan-rcb,-graph,mesh2d:2x2,-scenario,${v1},-refine,1|-refine 1: trace '.*/v1.trace' is format version 1"
  "carry_v1|lbbench|${chain},-graph,line:2,-scenario,${v1}|-trace_split carry: trace '.*/v1.trace' is format version 1, which records no cell positions: give -trace_split app or even"
  "carry_v1_shift|lbbench|-virtual,-chain,-lb_method,sfc-shift,-graph,line:2,-scenario,${v1}|-trace_split carry: trace '.*/v1.trace' is format version 1"
  # refinement beyond memory is refused before allocating
  "refine_memory|lbbench|${chain},-graph,line:2,-scenario,${good},-refine,12|-refine 12: [0-9.e+]+ cells of trace '.*/good.trace' cycle [0-9]+ need about [0-9.e+]+ GB, more than this machine's"
  "refine_negative|lbbench|${chain},-graph,line:2,-scenario,${good},-refine,-1|-refine -1: must not be negative"
  # task mode with -mesh: the subdomain graph needs the mesh, positions, and the recording's mesh
  "subdomains_no_mesh|lbbench|${tmesh},-graph,subdomains:4,-scenario,${good}|-graph subdomains:4: the subdomain graph of a trace's start split needs -tasks trace -scenario trace:FILE\\[:CYCLE\\] -mesh MESH"
  "subdomains_v1|lbbench|${tmesh},-graph,subdomains:4,-scenario,${v1},-mesh,builtin:unit|-mesh builtin:unit: trace '.*/v1.trace' is format version 1, which records no cell positions"
  "mesh_dimension|lbbench|${tmesh},-graph,subdomains:4,-scenario,${good},-mesh,${PROJECT_SOURCE_DIR}/meshes/fichera.inp|-mesh .*/fichera.inp \\(for 2D trace '.*/good.trace'\\): .*C3D8 is a 3D hexahedron"
  "mesh_trees|lbbench|${tmesh},-graph,subdomains:4,-scenario,${good},-mesh,builtin:brick:2x1|-mesh builtin:brick:2x1: trace '.*/good.trace' was not recorded on this mesh of 2 trees: trace cycle [0-9]+: cells on 1 trees, the mesh has 2"
  "mesh_missing|lbbench|${tmesh},-graph,subdomains:4,-scenario,${good},-mesh,${tdir}/none.inp|-mesh .*/none.inp \\(for 2D trace '.*/good.trace'\\): .*none.inp"
  "mesh_replicate|lbbench|${tmesh},-graph,subdomains:4,-scenario,${good},-mesh,builtin:unit,-replicate,2|-replicate 2: with -mesh the tasks are the recorded cells with their true neighbours"
  "mesh_chain|lbbench|${chain},-graph,line:2,-scenario,${good},-mesh,builtin:unit|-mesh builtin:unit: gives the cells of a trace their neighbours in task mode"
  "subdomains_ranks|lbbench|${tmesh},-graph,subdomains:0,-scenario,${good},-mesh,builtin:unit|graph 'subdomains:0': expected subdomains:P with 1 <= P")
amrdlb_add_bad_inputs(PREFIX trace_bad_ LABELS trace READS trace_bad CASES ${cases})
amrdlb_add_bad_inputs(PREFIX trace_bad_ LABELS trace CASES
  "no_trace|lbbench|-virtual,-tasks,trace,-lb_method,zoltan-rcb,-graph,mesh2d:2x2,-scenario,box|-tasks trace needs -scenario trace:FILE\\[:CYCLE\\]"
  "replicate_synthetic|lbbench|-virtual,-graph,line:4,-scenario,box,-lb_method,sfc,-replicate,2|-replicate, -refine and -trace_split apply to -scenario trace:FILE\\[:CYCLE\\] only"
  "app_no_file|amr2d|-problem,linear,-trace_loads|option -trace_loads: needs a value"
  "app_no_directory|amr2d|-problem,linear,-trace_loads,${tdir}/nosuchdir/x.trace|option -trace_loads .*/nosuchdir/x.trace: cannot open for writing")
