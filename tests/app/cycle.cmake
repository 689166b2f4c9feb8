# ==== the cycle and the balancing step (src/app/cycle.c, lbcycle.c) ====
# The cycle with the built-in balancer.  cycle_check asserts one
# property per run; see the comment at the top of cycle_check.c.
amrdlb_add_test_programs(amrdlb_app cycle_check)
set(chk2 $<TARGET_FILE:cycle_check2d>)
set(chk3 $<TARGET_FILE:cycle_check3d>)

# Migration keeps data: every method, 1, 2 and 4 ranks, model weights 1,4.
foreach(np 1 2 4)
  amrdlb_add_test(NAME cycle_migration_2d_np${np} LABELS mpi cycle
    COMMAND ${chk2} -check migration -lb_weights model -lb_cost 1,4 NPROCS ${np}
    PASS_REGEX "migration passed")
endforeach()
# 3D on 3 ranks: on 2 or 4 the split by z halves the vertical well's
# tracer column evenly and nothing would need to move.
amrdlb_add_test(NAME cycle_migration_3d_np3 LABELS mpi cycle
  COMMAND ${chk3} -check migration -level 2 -max_level 4 -lb_weights model -lb_cost 1,4 NPROCS 3
  PASS_REGEX "migration passed")

# Communication graph: weights 1 and 1.05 leave the even split a few
# percent off (asserted below 5%); the diffusion-family methods add no pair
# of ranks sharing a face, and the counts match an independent recount.
foreach(np 2 4)
  amrdlb_add_test(NAME cycle_graph_2d_np${np} LABELS mpi cycle
    COMMAND ${chk2} -check graph -lb_weights model -lb_cost 1,1.05 -max_pct 5 NPROCS ${np}
    PASS_REGEX "graph passed")
endforeach()
amrdlb_add_test(NAME cycle_graph_3d_np3 LABELS mpi cycle
  COMMAND ${chk3} -check graph -level 2 -max_level 4 -lb_weights model -lb_cost 1,1.05 -max_pct 5 NPROCS 3
  PASS_REGEX "graph passed")

# ---- the timing fit's rows on a moving front (fitcounts) ----------
# Synthetic windows whose type-1 cells grow within each window: the steps'
# counts recover the true cost ratio 10 exactly, the window's start counts
# fit about 5.7 (cycle_check.c, -check fitcounts).  2 and 4 ranks: on one
# the fit keeps the previous costs (one row per window, flagged).
foreach(np 2 4)
  amrdlb_add_test(NAME cycle_fitcounts_2d_np${np} LABELS mpi cycle
    COMMAND ${chk2} -check fitcounts NPROCS ${np}
    PASS_REGEX "fitcounts passed")
endforeach()
# ---- end of the fit rows' block ---------------------------------------------

# Bad -lb_* input: one error line naming the option, 1 and 2 ranks (the
# Poisson problem has one load type, so one -lb_cost value is its count).
set(d "amr2d|-problem,darcy-transport,-t_final,0.01")
set(cases
  "method|${d},-lb_method,nosuch|option -lb_method nosuch: unknown method .choose from diffusion, .*sfc-shift, sfc-exact, hiersfc, none."
  "weights|${d},-lb_weights,guess|option -lb_weights guess: unknown weight mode .choose from count, timing, model, measured."
  "window|${d},-lb_weights,timing,-lb_window,0|option -lb_window 0: must be at least 1"
  "history|${d},-lb_weights,timing,-lb_history,0|option -lb_history 0: must be at least 1"
  "forget|${d},-lb_weights,timing,-lb_forget,1.5|option -lb_forget 1.5: must be in .0, 1."
  "cost_count|${d},-lb_weights,model,-lb_cost,1|option -lb_cost: needs 2 values, one cost per load type of this problem, got 1"
  "cost_sign|amr2d|-problem,sine,-lb_weights,model,-lb_cost,-2|option -lb_cost: cost -2.? of load type 0 must be positive"
  "tree|${d},-lb_method,ripple-hare,-lb_graph,ring|option -lb_method ripple-hare: Ripple needs the trees of a line, mesh2d or hypercube graph, not 'ring:[12]' .-lb_graph ring."
  "tree_3d|amr3d|-problem,sine,-lb_method,ripple-tortoise,-lb_graph,ring|option -lb_method ripple-tortoise: Ripple needs the trees of a line, mesh2d or hypercube graph"
  "graph|${d},-lb_graph,star|option -lb_graph star: unknown graph .choose from line, ring."
  "interval|${d},-lb_interval,0|option -lb_interval 0: must be at least 1"
  "check_interval|${d},-lb_check_interval,0|option -lb_check_interval 0: must be at least 1"
  "max_iters|${d},-lb_max_iters,-1|option -lb_max_iters -1: must not be negative"
  "threshold|${d},-lb_threshold,100|option -lb_threshold 100.?: must be a percentage in .0, 100."
  "initial|${d},-lb_initial,random|option -lb_initial random: unknown initial partition .choose from even, skew."
  "stop|${d},-lb_method,diffusion,-lb_target,0,-lb_max_iters,0|option -lb_method diffusion: method 'diffusion' does not stop by itself")
amrdlb_add_bad_inputs(PREFIX cycle_bad_ LABELS cycle CASES ${cases})

# amrdlb_add_timing_test(NAME n RUN1 cmd... RUN2 cmd... CHECK cmd... PASS regex
#                        FAILURE text [TIMEOUT s] [OUTPUTS path...])
# A check on real time (timing_check.cmake): the two 2-rank runs, then the
# check, alone on the cores; a failed check is measured again, three times in all.  Label
# timing: a noisy machine can fail them, so -LE timing leaves them out.
function(amrdlb_add_timing_test)
  cmake_parse_arguments(T "" "NAME;PASS;FAILURE;TIMEOUT" "RUN1;RUN2;CHECK;OUTPUTS" ${ARGN})
  # a list cannot cross add_test intact: "|" between words
  foreach(v RUN1 RUN2 CHECK)
    string(REPLACE ";" "|" ${v} "${T_${v}}")
  endforeach()
  amrdlb_add_test(NAME ${T_NAME} LABELS app mpi cycle timing OUTPUTS ${T_OUTPUTS}
    COMMAND ${CMAKE_COMMAND} "-DRUN1=${RUN1}" "-DRUN2=${RUN2}" "-DCHECK=${CHECK}" "-DPASS=${T_PASS}" "-DFAILURE=${T_FAILURE}"
            -P ${CMAKE_CURRENT_SOURCE_DIR}/timing_check.cmake)
  set_tests_properties(${T_NAME} PROPERTIES RUN_SERIAL TRUE PROCESSORS 2)
  if(T_TIMEOUT)
    set_tests_properties(${T_NAME} PROPERTIES TIMEOUT ${T_TIMEOUT})
  endif()
endfunction()

# Timing-based weights against real time (Niemoeller et al. 2020), 2 ranks: from a skewed
# start (rank 0 holds the tracer cells), after 3 rebalanced cycles the
# measured imbalance of the local work with timing weights is at most half
# of count weights' (medians over cycles 3-13: a cycle disturbed by another
# process is one outlier, which moved the former means).  Measured margin,
# with the conservative flux and the limiter: five runs on the idle
# machine (load below 1) gave median I% 10.5/45.1, 5.2/50.8, 8.8/50.4,
# 8.8/52.0, 22.1/64.5, ratios 0.10-0.34: the worst passes by 0.16 of the
# bound, 10 I% points.  Under a load of 25-35 (other engineers' builds)
# the former means gave ratios up to 0.71: a loaded machine is not what
# this test measures.
# Thread CPU time per rank makes this measurable on a shared machine; the
# runs are alone on the cores, and a disturbed measurement is repeated, three times in all
# (timing_check.cmake).
set(skew -problem darcy-transport -amr_min_level 5 -amr_max_level 7 -amr_interval 20 -t_final 0.06 -lb_initial skew)
set(mpirun ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${AMRDLB_MPIEXEC_PREFLAGS} $<TARGET_FILE:amr2d> ${skew})
foreach(w timing count)
  set(run_${w} ${mpirun} -lb_weights ${w} -report ${CMAKE_CURRENT_BINARY_DIR}/skew_${w}.jsonl ${MPIEXEC_POSTFLAGS})
endforeach()
amrdlb_add_timing_test(NAME cycle_weights_timing_beats_count RUN1 ${run_timing} RUN2 ${run_count}
  OUTPUTS ${CMAKE_CURRENT_BINARY_DIR}/skew_timing.jsonl ${CMAKE_CURRENT_BINARY_DIR}/skew_count.jsonl
  CHECK ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_report.py timing
        ${CMAKE_CURRENT_BINARY_DIR}/skew_timing.jsonl ${CMAKE_CURRENT_BINARY_DIR}/skew_count.jsonl 3
  PASS "timing check passed" FAILURE "timing weights did not beat count weights")

# -lb_threshold's ski-rental rule on a darcy-transport run (the weights study's:
# second-order, 2 ranks, real time), shortened to t 0.05 (84 cycles):
# every record's loss, residual, cost and decision agree with its rank
# times (check_report.py decide), at most half the cycles rebalance by
# measured loss (without -lb_threshold all do; those on the coming cycle's
# predicted gain are checked one by one) and at least a tenth (the rule of main,
# one cycle's gain against the migration, stopped rebalancing after 3 and
# 6 cycles and measured I% 45 and 40.5), and the mean measured I% stays
# below 30 with timing weights and 58 with count weights. Rebalancing at
# every cycle measured 14.5 and 25, and the rule 9.4-24 and 25.7-34.1 in
# repeated runs on this 2-core machine: the weights and the machine's
# noise, not the rule, set these floors, so the bounds leave room for the
# noise and the rebalance count catches a rule that stops.  Measured margin:
# 6 points for timing weights (24 against 30) and 7.9 for count (34.1
# against 42) in the worst runs to t 0.2 (357 cycles); the first 84 cycles
# of a run at load 10 measured 15.5 (all 357: 18.2) and 39.1 (38.3), 31 and
# 34 rebalances, 19 and 32 by loss: t 0.05 keeps every bound at the same
# margins (count's 2.9 points) at a quarter of the time.  At load 29 a
# timing run measured 31.6 and failed: the machine's noise there exceeds
# the rule's effect at any length.  Measured again at 2026-11-28 on the
# idle machine (load below 2), count weights: 16.0, 44.7 and 53.5 with
# 74bc7fd's build and 26.2-51.3 in 8 runs with this one (a decision early
# in the run sets the path of all later ones), against 63.7 and 69.4 with
# -lb_method none; the count bound is 58, between the two, so that it
# fails a balancer that does nothing and not the noise of one that works
# (the count of the rule's acts, rebalances and no_gain, still catches a
# rule that stops: check_report.py decide).  Thread CPU
# time per rank, alone on the cores, a disturbed
# measurement repeated, three times in all (timing_check.cmake).
set(decide -problem darcy-transport -amr_min_level 5 -amr_max_level 8 -t_final 0.05 -lb_method second-order -lb_threshold 5)
set(mpirun ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${AMRDLB_MPIEXEC_PREFLAGS} $<TARGET_FILE:amr2d> ${decide})
foreach(w timing count)
  set(run_${w} ${mpirun} -lb_weights ${w} -report ${CMAKE_CURRENT_BINARY_DIR}/decide_${w}.jsonl ${MPIEXEC_POSTFLAGS})
endforeach()
amrdlb_add_timing_test(NAME cycle_decide_ski_rental RUN1 ${run_timing} RUN2 ${run_count}
  CHECK ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_report.py decide
        30 ${CMAKE_CURRENT_BINARY_DIR}/decide_timing.jsonl 58 ${CMAKE_CURRENT_BINARY_DIR}/decide_count.jsonl
  PASS "decide check passed" FAILURE "the -lb_threshold rule did not keep the imbalance down with few rebalances" TIMEOUT 600)

# The mission run, shortened: second-order with timing weights and a
# threshold on 4 ranks; every report field present and consistent.  The
# last cycle's cells and mass do not depend on the partition (same in
# every run measured); the mass to 6 digits, as the pressure solve's
# tolerance and the ranks' summation order may move later ones.
amrdlb_add_test(NAME cycle_app_second_order_np4 OUTPUTS ${CMAKE_CURRENT_BINARY_DIR}/second_order.jsonl LABELS app mpi cycle
  COMMAND $<TARGET_FILE:amr2d> -problem darcy-transport -amr_min_level 4 -amr_max_level 6 -t_final 0.05
          -lb_method second-order -lb_weights timing -lb_threshold 5
          -report ${CMAKE_CURRENT_BINARY_DIR}/second_order.jsonl NPROCS 4
  PASS_REGEX "cycle 9, t 0.05000, step 97: 502 cells \\(197 of type 1\\), mass 7\\.21803")
amrdlb_add_test(NAME cycle_app_second_order_report LABELS app cycle
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_report.py fields ${CMAKE_CURRENT_BINARY_DIR}/second_order.jsonl
  PASS_REGEX "fields check passed")
set_tests_properties(cycle_app_second_order_report PROPERTIES FIXTURES_REQUIRED cycle_app_second_order_np4)

# The curve methods of Lieber and Nagel 2014 in the app, the same run: the
# exact 1D partition (sfc-exact) and HierSFC (2 groups of 2 ranks), and
# every record's largest part against the exact partition's
# (check_report.py bound: within 5% of it in the cycles that rebalanced:
# at about 120 cells per rank, keeping families of 4 siblings together
# moves the cuts by up to 3 cells, measured 2.5% at most).
foreach(method sfc-exact hiersfc)
  amrdlb_add_test(NAME cycle_app_${method}_np4 OUTPUTS ${CMAKE_CURRENT_BINARY_DIR}/${method}.jsonl LABELS app mpi cycle
    COMMAND $<TARGET_FILE:amr2d> -problem darcy-transport -amr_min_level 4 -amr_max_level 6 -t_final 0.05
            -lb_method ${method} -lb_weights timing -report ${CMAKE_CURRENT_BINARY_DIR}/${method}.jsonl NPROCS 4
    PASS_REGEX "cycle 9, t 0.05000, step 97: 502 cells \\(197 of type 1\\), mass 7\\.21803")
  amrdlb_add_test(NAME cycle_app_${method}_bound LABELS app cycle
    COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_report.py bound 0.05 ${CMAKE_CURRENT_BINARY_DIR}/${method}.jsonl
    PASS_REGEX "bound check passed")
  set_tests_properties(cycle_app_${method}_bound PROPERTIES FIXTURES_REQUIRED cycle_app_${method}_np4)
endforeach()
amrdlb_add_bad_inputs(PREFIX app_hiersfc_bad_ LABELS cycle CASES
  "groups|amr2d|-problem,lshape,-mesh,meshes/lshape.inp,-lb_method,hiersfc,-lb_hiersfc_groups,0|option -lb_method hiersfc: -lb_hiersfc_groups 0: the number of groups must be a whole number from 1 to the [12] ranks")

# Every postprocess script answers -h with its usage (with no traceback:
# tests/expect_pass.cmake).
file(GLOB postprocess_scripts ${PROJECT_SOURCE_DIR}/postprocess/*.py)
foreach(script ${postprocess_scripts})
  get_filename_component(name ${script} NAME)
  amrdlb_add_test(NAME postprocess_help_${name} LABELS app COMMAND ${AMRDLB_PYTHON} ${script} -h PASS_REGEX "^usage: ${name} ")
endforeach()

# postprocess/cycle_plots.py on the reports above: six plots and a table
# with one row per report, fastest first; then the table and the figures
# checked against the reports (rows by wall time, the I% recomputed, every
# figure at most 1600 px tall).
set(plotted ${CMAKE_CURRENT_BINARY_DIR}/skew_timing.jsonl ${CMAKE_CURRENT_BINARY_DIR}/skew_count.jsonl
    ${CMAKE_CURRENT_BINARY_DIR}/second_order.jsonl)
amrdlb_add_test(NAME cycle_postprocess_plots OUTPUTS ${CMAKE_CURRENT_BINARY_DIR}/plots LABELS app cycle
  COMMAND ${AMRDLB_PYTHON} ${PROJECT_SOURCE_DIR}/postprocess/cycle_plots.py -o ${CMAKE_CURRENT_BINARY_DIR}/plots ${plotted}
  PASS_REGEX "Fastest here: \\*\\*[a-z-]+/[a-z]+\\*\\*.*\\| run \\| wall s \\|")
set_tests_properties(cycle_postprocess_plots PROPERTIES FIXTURES_REQUIRED "cycle_weights_timing_beats_count;cycle_app_second_order_np4")
amrdlb_add_test(NAME cycle_postprocess_files LABELS app cycle
  COMMAND ${CMAKE_COMMAND} -E md5sum ${CMAKE_CURRENT_BINARY_DIR}/plots/imbalance.png ${CMAKE_CURRENT_BINARY_DIR}/plots/migrated.png
          ${CMAKE_CURRENT_BINARY_DIR}/plots/loads.png ${CMAKE_CURRENT_BINARY_DIR}/plots/time.png ${CMAKE_CURRENT_BINARY_DIR}/plots/decision.png
          ${CMAKE_CURRENT_BINARY_DIR}/plots/weights.png ${CMAKE_CURRENT_BINARY_DIR}/plots/methods.md)
amrdlb_add_test(NAME cycle_postprocess_check LABELS app cycle
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_plots.py dir ${CMAKE_CURRENT_BINARY_DIR}/plots ${plotted}
  PASS_REGEX "(^|\n)dir ok: 3 methods")
set_tests_properties(cycle_postprocess_files cycle_postprocess_check PROPERTIES FIXTURES_REQUIRED cycle_postprocess_plots)
# --repeats: reports of one method/weights are one row, with the runs
# counted and the least and greatest wall time beside the median
amrdlb_add_test(NAME cycle_postprocess_repeats LABELS app cycle
  COMMAND ${AMRDLB_PYTHON} ${PROJECT_SOURCE_DIR}/postprocess/cycle_plots.py --repeats -o ${CMAKE_CURRENT_BINARY_DIR}/plots_repeats
          ${CMAKE_CURRENT_BINARY_DIR}/skew_timing.jsonl ${CMAKE_CURRENT_BINARY_DIR}/second_order.jsonl ${CMAKE_CURRENT_BINARY_DIR}/skew_timing.jsonl
  PASS_REGEX "runs per method: [^\n]*sfc/timing 2.*\\| sfc/timing \\| [0-9.]+ \\[[0-9.]+, [0-9.]+\\] \\|")
set_tests_properties(cycle_postprocess_repeats PROPERTIES FIXTURES_REQUIRED "cycle_weights_timing_beats_count;cycle_app_second_order_np4")

# The figures' defects of issues 32 and 40, on made-up reports (no run
# needed): reports of two problems are one error line; time.png has linear
# axes and no offset; decision.png tells loss from gain and draws the
# threshold and the floor; 14 methods get a panel each (pages, which
# draws them as a user's 14 would be); methods.md sorted
# by wall time, at most 8 columns, its I% ranking as imbalance.png's; no
# figure over 1600 px or with a legend over its title, a figure not
# written says why; poisson-bench.png ticks every cycle's cells; loads.png
# draws the side files' per-rank loads.
foreach(case mixed time decision table pages poisson loads)
  amrdlb_add_test(NAME plots_${case} LABELS app
    COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_plots.py ${case} ${CMAKE_CURRENT_BINARY_DIR}/check_plots
    PASS_REGEX "(^|\n)${case} ok: ")
endforeach()

# The ready-made balancing runs in config/, shortened, and the
# method-comparison run (every method on one problem, then the plots).
# Each asserts its last cycle's cells and mass (6 digits, as above).
set(config_last_darcy-transport "cycle 5, t 0.02000, step 58: 1972 cells \\(779 of type 1\\), mass 5\\.84606")
set(config_last_moving-front "cycle 6, t 0.02000, step 68: 5082 cells \\(3382 of type 1\\), mass 1\\.39541")
set(config_last_rotating-hill "cycle 3, t 0.02000, step 37: 2368 cells \\(2152 of type 1\\), mass 2\\.38167")
foreach(run darcy-transport moving-front rotating-hill)
  amrdlb_add_test(NAME cycle_config_${run} OUTPUTS ${CMAKE_CURRENT_BINARY_DIR}/config_${run}.jsonl LABELS app mpi cycle
    COMMAND $<TARGET_FILE:amr2d> -options_file config/lb-${run}.opts -t_final 0.02 -amr_interval 10
            -report ${CMAKE_CURRENT_BINARY_DIR}/config_${run}.jsonl NPROCS 2
    PASS_REGEX "${config_last_${run}}")
endforeach()
# (run from the build folder: the script finds config/ and postprocess/
# beside itself).  A user's own file in the output folder, no report,
# is neither read (the plots would fail on it) nor removed.  Then the
# folder checked against its reports (check_plots.py dir): methods.md by
# wall time with the I% of imbalance.png, every figure at most 1600 px.
file(WRITE ${CMAKE_CURRENT_BINARY_DIR}/compare/mine.jsonl "a user's own file\n")
amrdlb_add_test(NAME cycle_config_compare_methods LABELS app mpi cycle
  COMMAND sh -c "env PYTHON=${AMRDLB_PYTHON} sh ${PROJECT_SOURCE_DIR}/config/compare-methods.sh -n 2 -b ${PROJECT_BINARY_DIR} -o compare -- -t_final 0.01 -amr_interval 10 -amr_max_level 6 && cat compare/mine.jsonl && ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_plots.py dir compare compare/*-1.jsonl"
  PASS_REGEX "Methods on darcy-transport on builtin:unit, 2 ranks.*\\| sfc/count \\| [0-9.]+ \\|.*a user's own file\ndir ok: 16 methods")
set_tests_properties(cycle_config_compare_methods PROPERTIES PROCESSORS 2 WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# -x: every method of -m's list with and without the reaction offload on
# reactive-transport, the two told apart in methods.md ("+offload"), and
# its 8 rows (4 methods twice: the options file has count weights, so
# sfc is the reference) checked against the reports as above (every
# method: the 16 rows of the test before, 30 with -x took 17 s).
amrdlb_add_test(NAME cycle_config_compare_offload LABELS app mpi cycle reactive OUTPUTS ${CMAKE_CURRENT_BINARY_DIR}/compare-offload
  COMMAND sh -c "env PYTHON=${AMRDLB_PYTHON} sh ${PROJECT_SOURCE_DIR}/config/compare-methods.sh -n 2 -b ${PROJECT_BINARY_DIR} -o compare-offload -f ${PROJECT_SOURCE_DIR}/config/reactive-transport.opts -m none,sfc,diffusion,tree -x -- -t_final 0.004 -amr_max_level 5 && ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_plots.py dir compare-offload compare-offload/*-1.jsonl"
  PASS_REGEX "\\| sfc/count \\+offload \\|.*dir ok: 8 methods")
set_tests_properties(cycle_config_compare_offload PROPERTIES PROCESSORS 2 WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# Each study script from another folder than the repository's (the build
# folder): it finds its option files, then stops at the first run that
# fails, with that run's error line (1 and 2 ranks: the script's -n, an
# output folder each, as the two may run at once).
foreach(np 1 2)
  foreach(case "compare-methods|-n,${np},-o,scripts-bad/compare-np${np}"
               "weights-study|-n,${np},-r,1,-o,scripts-bad/weights-np${np}"
               "trace-study|-n,${np},-o,scripts-bad/trace-np${np}")
    string(REPLACE "|" ";" f "${case}")
    list(GET f 0 script)
    list(GET f 1 args)
    string(REPLACE "," ";" args "${args}")
    amrdlb_add_test(NAME config_${script}_bad_run_np${np} LABELS badinput app
      COMMAND sh ${PROJECT_SOURCE_DIR}/config/${script}.sh -b ${PROJECT_BINARY_DIR} ${args} -- -nosuch_option
      EXPECT_ERROR "${script}.sh: error: the run [a-z0-9-]+ failed: amr[23]d: error: unknown option -nosuch_option \\(its output: scripts-bad/")
    set_tests_properties(config_${script}_bad_run_np${np} PROPERTIES WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
  endforeach()
endforeach()
# compare-methods.sh's -m names methods the program has, before any run
amrdlb_add_test(NAME config_compare-methods_bad_method LABELS badinput app
  COMMAND sh ${PROJECT_SOURCE_DIR}/config/compare-methods.sh -b ${PROJECT_BINARY_DIR} -n 2 -o scripts-bad/compare-m -m sfc,nosuch
  EXPECT_ERROR "compare-methods.sh: error: option -m sfc,nosuch: 'nosuch' is not a method of .*/amr2d \\(choose from diffusion .* none\\)")
set_tests_properties(config_compare-methods_bad_method PROPERTIES WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
# trace-study.sh's -s names studies it has, before it records anything
foreach(np 1 2)
  amrdlb_add_test(NAME config_trace-study_bad_studies_np${np} LABELS badinput app
    COMMAND sh ${PROJECT_SOURCE_DIR}/config/trace-study.sh -b ${PROJECT_BINARY_DIR} -n ${np} -o scripts-bad/trace-studies-np${np} -s "tasks lines"
    EXPECT_ERROR "trace-study.sh: error: -s 'tasks lines': expected chain, tasks, synthetic or line, not 'lines'")
  set_tests_properties(config_trace-study_bad_studies_np${np} PROPERTIES WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
endforeach()

# config/poisson-bench.sh at its smallest: Q2, 2 cycles in 2D, 1 in 3D,
# the two ends of the operator/preconditioner pairs once (run from the
# build folder), then its output's structure and numbers: equal meshes for
# both pairs, 4225 and 1685 DoFs on the starting meshes, bounded iterations.
amrdlb_add_test(NAME poisson_bench_script OUTPUTS ${CMAKE_CURRENT_BINARY_DIR}/poisson-bench LABELS app mpi
  COMMAND env PYTHON=${AMRDLB_PYTHON} sh ${PROJECT_SOURCE_DIR}/config/poisson-bench.sh -r 1 -k 2 -c 2 -C 1
          -p assembled:amg,matrix-free:mg -b ${PROJECT_BINARY_DIR} -o poisson-bench
  PASS_REGEX "== 2D Q2 interface on builtin:unit, 2 ranks: matrix-free \\+ mg, median of 1 run(.*\n)+wrote poisson-bench/poisson-bench.md")
set_tests_properties(poisson_bench_script PROPERTIES PROCESSORS 2 WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR})
amrdlb_add_test(NAME poisson_bench_check LABELS app
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_poisson_bench.py ${CMAKE_CURRENT_BINARY_DIR}/poisson-bench 4 2 1 4225 1685
  PASS_REGEX "poisson bench check passed: 4 runs, 2 cases")
set_tests_properties(poisson_bench_check PROPERTIES FIXTURES_REQUIRED poisson_bench_script)
amrdlb_add_test(NAME poisson_bench_help LABELS app
  COMMAND sh ${PROJECT_SOURCE_DIR}/config/poisson-bench.sh -h PASS_REGEX "^usage: poisson-bench.sh \\[-n RANKS\\]")
# Bad input: one error line naming the option, or the run that failed (on
# 1 and 2 ranks: the script's -n).
foreach(np 1 2)
  foreach(case "rank|-r,0|option -r 0: must be a positive whole number"
               "dims|-d,4|option -d 4: the dimension is 2 or 3"
               "degree|-k,3|option -k 3: the degree is 1 or 2"
               "pair|-p,assembled:ilu|option -p assembled:ilu: a pair is"
               "build|-b,/nonexistent|/nonexistent/bin/amr2d not found"
               "run|-d,2,-k,1,-c,1,-r,1,-p,matrix-free:mg,--,-poisson_mg_smooth_degree,0|the run 2d-q1-matrix-free-mg-1 failed")
    string(REPLACE "|" ";" f "${case}")
    list(GET f 0 name)
    list(GET f 1 args)
    list(GET f 2 regex)
    string(REPLACE "," ";" args "${args}")
    amrdlb_add_test(NAME poisson_bench_bad_${name}_np${np} LABELS badinput app
      COMMAND sh ${PROJECT_SOURCE_DIR}/config/poisson-bench.sh -n ${np} -b ${PROJECT_BINARY_DIR}
              -o ${CMAKE_CURRENT_BINARY_DIR}/poisson-bench-bad-${name}-np${np} ${args}
      EXPECT_ERROR "poisson-bench.sh: error: ${regex}")
  endforeach()
endforeach()

# A Poisson problem through the cycle with the balancer: one load type (the
# element loops of assembly and estimate are the timed work), every report
# field; the last cycle's cells, DoFs and L2 error, which the partition
# does not change.
amrdlb_add_test(NAME cycle_poisson_np2 OUTPUTS ${CMAKE_CURRENT_BINARY_DIR}/poisson.jsonl LABELS app mpi cycle
  COMMAND $<TARGET_FILE:amr2d> -problem lshape -mesh meshes/lshape.inp -amr_min_level 2 -amr_cycles 4
          -lb_method diffusion -lb_weights timing -report ${CMAKE_CURRENT_BINARY_DIR}/poisson.jsonl NPROCS 2
  PASS_REGEX "cycle  3: cells      1977 dofs      1921 its +[0-9]+ res [0-9.e+-]+ L2 3\\.614e-04 ")
amrdlb_add_test(NAME cycle_poisson_report LABELS app cycle
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_report.py fields ${CMAKE_CURRENT_BINARY_DIR}/poisson.jsonl
  PASS_REGEX "fields check passed")
set_tests_properties(cycle_poisson_report PROPERTIES FIXTURES_REQUIRED cycle_poisson_np2)

# The report at scale (issue 41 item 3): every per-rank value in the side
# file round-trips on 1, 2 (cycle_poisson_report) and 4 ranks: the record's
# min/mean/max/argmax are those of the side file's values and rank_cells
# sum to the next cycle's cells (check_report.py fields); and a record's
# size does not grow with the ranks: the same run on 1 and 4 ranks, the
# same lists of the same lengths in each cycle's records (no per-rank
# array), mean record sizes within 10%.
foreach(np 1 4)
  set(out ${CMAKE_CURRENT_BINARY_DIR}/report-ranks-np${np}.jsonl)
  amrdlb_add_test(NAME report_ranks_np${np} OUTPUTS ${out} ${out}.ranks LABELS app cycle report NPROCS ${np}
    COMMAND $<TARGET_FILE:amr2d> -problem lshape -mesh meshes/lshape.inp -amr_min_level 2 -amr_cycles 3 -report ${out}
    PASS_REGEX "cycle  2: cells")
  amrdlb_add_test(NAME report_ranks_np${np}_fields LABELS app cycle report READS report_ranks_np${np}
    COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_report.py fields ${out}
    PASS_REGEX "fields check passed")
endforeach()
# ... and on 16 ranks, where Open MPI 4.1's sieving of collective writes
# gave two side files of three rows of other bytes (check_report.py fields
# failed) until AmrInitialize turned it off (AmrMpiIoDefaults)
set(out ${CMAKE_CURRENT_BINARY_DIR}/report-ranks-np16.jsonl)
amrdlb_add_test(NAME report_ranks_np16 OUTPUTS ${out} ${out}.ranks LABELS app cycle report NPROCS 16
  COMMAND $<TARGET_FILE:amr2d> -problem lshape -mesh meshes/lshape.inp -amr_min_level 3 -amr_cycles 4 -report ${out}
  PASS_REGEX "cycle  3: cells")
amrdlb_add_test(NAME report_ranks_np16_fields LABELS app cycle report READS report_ranks_np16
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_report.py fields ${out}
  PASS_REGEX "fields check passed")
amrdlb_add_test(NAME report_ranks_size LABELS app cycle report READS "report_ranks_np1;report_ranks_np4"
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_report.py size 1.1 ${CMAKE_CURRENT_BINARY_DIR}/report-ranks-np1.jsonl
          ${CMAKE_CURRENT_BINARY_DIR}/report-ranks-np4.jsonl
  PASS_REGEX "size check passed")
# -report_ranks refused: a folder in the side file's place, an unknown
# setting, the side file asked for without a report.
set(ranks_bad ${CMAKE_CURRENT_BINARY_DIR}/report-ranks-bad)
file(MAKE_DIRECTORY ${ranks_bad}/r.jsonl.ranks)
amrdlb_add_bad_inputs(PREFIX report_ranks_bad_ LABELS app report badinput CASES
  "folder|amr2d|-problem,lshape,-mesh,meshes/lshape.inp,-report,${ranks_bad}/r.jsonl|option -report_ranks .*/r.jsonl.ranks: not a regular file .a folder."
  "setting|amr2d|-problem,lshape,-report,${ranks_bad}/s.jsonl,-report_ranks,maybe|option -report_ranks maybe: unknown choice .choose from auto, yes, no."
  "no_report|amr2d|-problem,lshape,-report_ranks,yes|option -report_ranks yes: needs -report FILE.jsonl")
# a side file the disk refuses (tests/failwrite.c): one line naming it, on
# 1 and 2 ranks, no hang in the collective write (a report of each's own:
# the two may run at once, and the second was refused as "in use by
# another run"; the test environment's tests/nodelay.c stays preloaded)
foreach(np 1 2)
  amrdlb_add_test(NAME report_ranks_bad_full_np${np} LABELS app report badinput NPROCS ${np}
    COMMAND env LD_PRELOAD=$<TARGET_FILE:failwrite>:$<TARGET_FILE:nodelay> AMRDLB_FAIL_WRITE=full_np${np}.jsonl.ranks $<TARGET_FILE:amr2d> -problem lshape
            -mesh meshes/lshape.inp -amr_cycles 2 -report ${ranks_bad}/full_np${np}.jsonl
    EXPECT_ERROR "amr2d: error: option -report_ranks: .*/full_np${np}.jsonl.ranks: cannot write: MPI_ERR_IO")
endforeach()

# -monitor_interval: a long run prints the human lines of the first, every
# K-th and the last cycle (26 cycles, K 10: cycles 0, 10, 20, 25), the
# default every cycle to 10 then every 10th (0-9, 10, 20, 25: 13).  The
# regexes match exactly that many pairs of lines.
# (CMake's regexes have no {n}: the pattern is repeated.)
set(pair "[^\n]*\namr2d: lb cycle [0-9]+[^\n]*\n")
string(REPEAT "${pair}" 4 pairs4)
string(REPEAT "${pair}" 13 pairs13)
amrdlb_add_test(NAME cycle_monitor_interval_np2 LABELS app mpi cycle
  COMMAND $<TARGET_FILE:amr2d> -problem rotating-hill -amr_min_level 3 -amr_max_level 4 -amr_interval 1 -t_final 0.05 -monitor_interval 10 NPROCS 2
  PASS_REGEX "^amr2d: mesh[^\n]*\n${pairs4}amr2d: 26 cycles in the run")
amrdlb_add_test(NAME cycle_monitor_default_np1 LABELS app cycle
  COMMAND $<TARGET_FILE:amr2d> -problem rotating-hill -amr_min_level 3 -amr_max_level 4 -amr_interval 1 -t_final 0.05 NPROCS 1
  PASS_REGEX "^amr2d: mesh[^\n]*\n${pairs13}amr2d: 26 cycles in the run")

# Offset shifting (Niemoeller et al. 2020) corrects what the cell costs miss, on real
# time, 2 ranks: with tracer cells declared five times cheaper than the
# others while they cost more (model weights 1,0.2), sfc keeps the
# measured I% of the local work high cycle after cycle, while sfc-shift,
# shifting each cut by the measured loads once per cycle, brings it down
# to a fraction of sfc's (medians over cycles).  It does not settle, by
# design: each cycle shifts the cuts of the adapted curve once, by the
# loads measured on the last one, and places them inside a part by the
# wrong model weights, while the front moves 50 steps a cycle into other
# parts; the I% swings (here 43, 37, 34, 28, 11, 1.7, 32, 17, 29, 4.6, 29
# in two runs alike), so the assertions are on medians.  Measured margins:
# sfc-shift/sfc 0.19, 0.29 (loads 29 and 10, earlier code), 0.36, 0.36,
# 0.38 (2026-11-27, loaded; a third of the runs failed the old bound 1/3),
# 0.47 once at load 31: bound 1/2.  The last third against cycles 1-3:
# 0.27, 0.34 (earlier), 0.60, 0.63 (2026-11-27): bound 3/4.  sfc 67.0,
# 73.9, 63.3, 62.1 against the floor 40.  darcy-transport as in
# config/lb-darcy-transport.opts (levels 5-8, a cycle every 50 steps,
# balanced every cycle), to t = 0.3 (with the conservative Darcy flux the steps are 7 times longer than when this ran to t = 0.08 in
# 21 cycles); about 5-20 s per run on a loaded machine.  A disturbed measurement is repeated, three times in all.
set(shift_run -problem darcy-transport -amr_min_level 5 -amr_max_level 8 -adv_degree 1 -adv_limiter -adv_load_threshold 0.1
              -amr_interval 50 -t_final 0.3 -lb_weights model -lb_cost 1,0.2)
foreach(m sfc sfc-shift)
  set(shift_${m} ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${AMRDLB_MPIEXEC_PREFLAGS} $<TARGET_FILE:amr2d> ${shift_run}
                 -lb_method ${m} -report ${CMAKE_CURRENT_BINARY_DIR}/shift_${m}.jsonl ${MPIEXEC_POSTFLAGS})
endforeach()
amrdlb_add_timing_test(NAME cycle_shift_corrects_wrong_costs RUN1 ${shift_sfc} RUN2 ${shift_sfc-shift}
  CHECK ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_report.py shift
        ${CMAKE_CURRENT_BINARY_DIR}/shift_sfc.jsonl ${CMAKE_CURRENT_BINARY_DIR}/shift_sfc-shift.jsonl 40 0.5 0.75
  PASS "shift check passed" FAILURE "sfc-shift did not bring the measured imbalance well below sfc's")
# One report schema for every problem: the reports of Poisson problems (2D
# and 3D, with and without an exact solution) and of the three advection
# problems begin with the same common fields, then the balancer's, then the
# problem's own; sim_time and step are null exactly without time.
set(fem_out ${PROJECT_BINARY_DIR}/tests/fem/out)
set(adv_out ${PROJECT_BINARY_DIR}/tests/problems)
amrdlb_add_test(NAME cycle_report_schema LABELS app cycle
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/check_report.py schema ${fem_out}/lshape_np4.jsonl ${fem_out}/config_fichera.jsonl
          ${fem_out}/config_interface.jsonl ${fem_out}/wavefront.jsonl ${adv_out}/front.jsonl ${adv_out}/darcy.jsonl
          ${CMAKE_CURRENT_BINARY_DIR}/config_rotating-hill.jsonl
  PASS_REGEX "schema check passed")
set_tests_properties(cycle_report_schema PROPERTIES FIXTURES_REQUIRED
  "fem_app_lshape_np4;fem_config_fichera;fem_config_interface;fem_app_wavefront_np2;advect_app_front_report_np2;advect_app_darcy_np2;cycle_config_rotating-hill")
