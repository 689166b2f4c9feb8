# ==== checkpoint and restart ====
# Checkpoint and restart of the app.  Each case runs the problem
# uninterrupted, runs it again with a checkpoint every cycle and SIGKILLs
# the whole job once checkpoint --kill-at is written, restarts it with
# -restart alone (the options come from the checkpoint), and compares the
# whole run's report with the uninterrupted one: on as many ranks with
# count weights bit for bit, else meshes and conserved quantities (with
# timing weights the partition follows measured times).
set(amr2d $<TARGET_FILE:amr2d>)
set(amr3d $<TARGET_FILE:amr3d>)
set(driver ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/restart_check.py
  --mpiexec "${MPIEXEC_EXECUTABLE} ${AMRDLB_MPIEXEC_PREFLAGS}" --exe ${amr2d})
set(lshape -problem lshape -mesh meshes/lshape.inp -amr_min_level 2 -amr_cycles 6)
# darcy to t 0.12: 8 cycles, the restart continuing 4 or 5 of them after
# the checkpoint (the 13 to t 0.2 added cycles of the same kind)
set(darcy -problem darcy-transport -amr_min_level 3 -amr_max_level 5 -t_final 0.12 -adv_degree 1 -amr_interval 10)
set(out ${CMAKE_CURRENT_BINARY_DIR}/out)

# Poisson: the solution is the next solve's initial guess
amrdlb_add_test(NAME restart_lshape_np2 RANKS 2 LABELS app mpi restart
  COMMAND ${driver} --dir ${out}/lshape_2 --ranks 2 --restart-ranks 2 --compare exact -- ${lshape})
amrdlb_add_test(NAME restart_lshape_np2_to_np3 RANKS 3 LABELS app mpi restart
  COMMAND ${driver} --dir ${out}/lshape_2_3 --ranks 2 --restart-ranks 3 --compare conserved -- ${lshape})
amrdlb_add_test(NAME restart_lshape_np4_to_np1 RANKS 4 LABELS app mpi restart
  COMMAND ${driver} --dir ${out}/lshape_4_1 --ranks 4 --restart-ranks 1 --compare conserved -- ${lshape})
# a job killed halfway through writing the next checkpoint (its forest
# file truncated, P.manifest.new incomplete) restarts from the previous one
amrdlb_add_test(NAME restart_lshape_half_written_np2 RANKS 2 LABELS app mpi restart
  COMMAND ${driver} --dir ${out}/lshape_half --ranks 2 --restart-ranks 2 --compare exact --leftover -- ${lshape})
# darcy-transport: the DG solver's time and inflow, the initial mass; with
# count weights bit for bit ...
foreach(np 2 4)
  amrdlb_add_test(NAME restart_darcy_count_np${np} RANKS ${np} LABELS app mpi restart
    COMMAND ${driver} --dir ${out}/darcy_count_${np} --ranks ${np} --restart-ranks ${np} --kill-at 3 --compare exact -- ${darcy})
endforeach()
# the .pvd series of the whole run: the outputs up to the checkpoint
# (kept in it), not those the killed job wrote after it, then the restart's
amrdlb_add_test(NAME restart_darcy_vtk_np2 RANKS 2 OUTPUTS ${out}/AmrDarcyVTK LABELS app mpi restart
  COMMAND ${driver} --dir ${out}/AmrDarcyVTK --ranks 2 --restart-ranks 2 --kill-at 2 --compare exact --vtk -- ${darcy} -checkpoint_interval 2)
# ... with timing weights and second-order diffusion (fitted costs and the
# stacked windows restored), the meshes and the mass; and with phases
# weights (the phase model's state and the phases' fits restored) on as
# many ranks and on more; from 4 ranks' parts of the checkpoint
# (P.S.ranks) onto 2 and 3, which read none of them
foreach(case "timing|second-order|2|2" "timing|second-order|2|3" "timing|second-order|4|1"
             "phases|sfc|2|2" "phases|sfc|2|3" "phases|sfc|4|2" "phases|sfc|4|3")
  string(REPLACE "|" ";" f "${case}")
  list(GET f 0 w)
  list(GET f 1 m)
  list(GET f 2 a)
  list(GET f 3 b)
  # the larger of the two jobs
  set(most ${a})
  if(b GREATER a)
    set(most ${b})
  endif()
  amrdlb_add_test(NAME restart_darcy_${w}_np${a}_to_np${b} RANKS ${most} LABELS app mpi restart
    COMMAND ${driver} --dir ${out}/darcy_${w}_${a}_${b} --ranks ${a} --restart-ranks ${b} --kill-at 3 --compare conserved
            -- ${darcy} -lb_weights ${w} -lb_method ${m})
endforeach()

# ... with sfc-shift (Niemoeller et al.'s sequence: its steps, whether it
# settled and its best partition, whose cells per part each rank keeps
# in its own part of the checkpoint and the restart gathers)
amrdlb_add_test(NAME restart_darcy_sfc_shift_np2 RANKS 2 LABELS app mpi restart
  COMMAND ${driver} --dir ${out}/darcy_shift_2 --ranks 2 --restart-ranks 2 --kill-at 3 --compare conserved
          -- ${darcy} -lb_weights count -lb_method sfc-shift)

# reactive-transport: B, C and the per-cell reaction cost are extra DG
# fields in the quadrant data, saved with the forest; with count weights
# bit for bit, with measured weights (the fitted costs restored) on 2 -> 3
# ranks the meshes, reaction states and species masses, and the whole
# run's .pvd series across the change of rank count
set(reactive -problem reactive-transport -amr_min_level 3 -amr_max_level 5 -adv_degree 1 -adv_limiter -t_final 0.05 -amr_interval 5)
amrdlb_add_test(NAME restart_reactive_count_np2 RANKS 2 LABELS app mpi restart
  COMMAND ${driver} --dir ${out}/reactive_count --ranks 2 --restart-ranks 2 --kill-at 3 --compare exact -- ${reactive} -lb_weights count)
amrdlb_add_test(NAME restart_reactive_measured_np2_to_np3 RANKS 3 OUTPUTS ${out}/reactive_2_3 LABELS app mpi restart
  COMMAND ${driver} --dir ${out}/reactive_2_3 --ranks 2 --restart-ranks 3 --kill-at 2 --compare conserved --vtk
          -- ${reactive} -lb_weights measured -checkpoint_interval 2)
# the two restarted series read back by VTK itself, as ParaView reads
# them: every output's cells and time those of its cycle in the report
foreach(case "AmrDarcyVTK;restart_darcy_vtk_np2" "reactive_2_3;restart_reactive_measured_np2_to_np3")
  list(GET case 0 dir)
  list(GET case 1 run)
  amrdlb_add_test(NAME ${run}_read LABELS app restart vtk
    COMMAND ${check_vtk} ${out}/${dir}/vtk/out.pvd --report ${out}/${dir}/run.jsonl)
  set_tests_properties(${run}_read PROPERTIES FIXTURES_REQUIRED ${run})
endforeach()

# 3D: the DG tracer in the quadrants of an octree forest, bit for bit
amrdlb_add_test(NAME restart_hill3d_np2 RANKS 2 LABELS app mpi restart
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/restart_check.py
          --mpiexec "${MPIEXEC_EXECUTABLE} ${AMRDLB_MPIEXEC_PREFLAGS}" --exe ${amr3d}
          --dir ${out}/hill3d --ranks 2 --restart-ranks 2 --compare exact
          -- -problem rotating-hill -amr_min_level 2 -amr_max_level 4 -t_final 0.1 -amr_interval 5)

# Bad checkpoints: one error line naming the file, on 1 and 2 ranks.
set(bad ${CMAKE_CURRENT_BINARY_DIR}/bad)
amrdlb_add_test(NAME restart_bad_fixture LABELS app restart
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/make_bad.py --clean ${bad})
amrdlb_add_test(NAME restart_bad_fixture_run LABELS app restart
  COMMAND ${amr2d} ${lshape} -amr_cycles 2 -checkpoint ${bad}/good)
amrdlb_add_test(NAME restart_bad_fixture_run_outputs LABELS app restart
  COMMAND ${amr2d} ${lshape} -amr_cycles 3 -checkpoint ${bad}/out -report ${bad}/out.jsonl -trace_loads ${bad}/out.trace)
amrdlb_add_test(NAME restart_bad_fixture_damage LABELS app restart
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/make_bad.py ${bad})
set_tests_properties(restart_bad_fixture PROPERTIES FIXTURES_SETUP restart_bad0)
set_tests_properties(restart_bad_fixture_run restart_bad_fixture_run_outputs PROPERTIES FIXTURES_SETUP restart_bad1 FIXTURES_REQUIRED restart_bad0)
set_tests_properties(restart_bad_fixture_damage PROPERTIES FIXTURES_SETUP restart_bad FIXTURES_REQUIRED restart_bad1)
set(cases
  "missing|amr2d|-restart,${bad}/none|checkpoint '.*/none.manifest' cannot be read: No such file"
  "truncated|amr2d|-restart,${bad}/truncated|checkpoint file '.*/truncated.1.forest' has [0-9]+ bytes, its manifest .* says [0-9]+: it is truncated"
  "corrupted|amr2d|-restart,${bad}/corrupted|checkpoint file '.*/corrupted.1.state' is corrupted"
  "no_forest|amr2d|-restart,${bad}/noforest|checkpoint file '.*/noforest.1.forest' cannot be read"
  "version|amr2d|-restart,${bad}/version|checkpoint '.*/version.manifest': format version 1, this program reads version 2"
  "dimension|amr3d|-restart,${bad}/good|checkpoint '.*/good.manifest' holds a 2D forest, this program runs in 3D"
  "problem|amr2d|-restart,${bad}/good,-problem,sine|checkpoint '.*/good.manifest' was written with problem 'lshape', this run has 'sine'"
  "degree|amr2d|-restart,${bad}/good,-degree,2|checkpoint '.*/good.manifest' was written with degree 1, this run has 2"
  "mesh|amr2d|-restart,${bad}/good,-mesh,builtin:unit|checkpoint '.*/good.manifest' was written with mesh 'meshes/lshape.inp', this run has 'builtin:unit'"
  "cycles|amr2d|-restart,${bad}/good,-amr_cycles,1|option -amr_cycles 1: checkpoint '.*/good.manifest' continues at cycle 1"
  # what the restart continues, cut since: never zeros, never a broken line
  "trace_cut|amr2d|-restart,${bad}/out|option -trace_loads .*/out.trace: holds [0-9]+ bytes, the checkpoint continues it after byte [0-9]+: it was cut"
  "report_cut|amr2d|-restart,${bad}/out,-report,${bad}/cut.jsonl,-trace_loads,${bad}/other.trace|option -report .*/cut.jsonl: holds 1 whole records, the checkpoint continues after cycle 1: a record was cut"
  # a full disk: /dev/full in a file's place
  "vtk_full|amr2d|-problem,linear,-amr_cycles,1,-vtk,${bad}/vtkfull/o|option -vtk .*/vtkfull/o: cannot write .*/o_0000/o_0000_0000.vtu: No space left on device"
  "forest_link|amr2d|-problem,lshape,-amr_cycles,2,-checkpoint,${bad}/devfull|cannot write checkpoint file '.*/devfull.1.forest': it exists and is not a regular file")
amrdlb_add_bad_inputs(PREFIX restart_bad_ LABELS app restart READS restart_bad CASES ${cases})
# the restarts of bad/out take its outputs' locks: one at a time (on 1 and
# on 2 ranks at once, one of them found the other's lock under -j2)
set_tests_properties(restart_bad_trace_cut_np1 restart_bad_trace_cut_np2 restart_bad_report_cut_np1 restart_bad_report_cut_np2
  PROPERTIES RESOURCE_LOCK restart_bad_out)
# A problem with time restarted past its -t_final (the checkpoint after
# cycle 1 is at t 0.040809, 20 steps): refused as a passed -amr_cycles is,
# not run as a cycle of no steps.
amrdlb_add_test(NAME restart_bad_time_fixture OUTPUTS ${bad}/hill.manifest LABELS app restart
  COMMAND ${amr2d} -problem rotating-hill -amr_min_level 3 -amr_max_level 4 -amr_interval 10 -amr_cycles 3 -checkpoint ${bad}/hill)
set(cases
  "t_final|amr2d|-restart,${bad}/hill,-t_final,0.04|option -t_final 0.04: checkpoint '.*/hill.manifest' continues at t 0.040809")
amrdlb_add_bad_inputs(PREFIX restart_bad_ LABELS app restart READS restart_bad_time_fixture CASES ${cases})
amrdlb_add_bad_inputs(PREFIX restart_bad_ LABELS app restart CASES
  "no_prefix|amr2d|-problem,lshape,-checkpoint|option -checkpoint: needs a value"
  "interval|amr2d|-problem,lshape,-checkpoint,x,-checkpoint_interval,-1|option -checkpoint_interval -1: must not be negative"
  "no_directory|amr2d|-problem,lshape,-checkpoint,README.md/sub/ck|option -checkpoint README.md/sub/ck: cannot create its directory: Not a directory"
  "file_directory|amr2d|-problem,lshape,-checkpoint,README.md/ck|option -checkpoint README.md/ck: cannot write into directory 'README.md': Not a directory"
  # a full disk: /dev/full takes no byte
  "report_full|amr2d|-problem,lshape,-mesh,meshes/lshape.inp,-report,/dev/full|option -report /dev/full: cannot write: No space left on device"
  "trace_full|amr2d|-problem,linear,-trace_loads,/dev/full|option -trace_loads /dev/full: cannot write: No space left on device")

# A full disk while a checkpoint is written (tests/failwrite.c makes the
# writes of one piece fail with ENOSPC; p4est's own writer of the forest
# passes such a failure silently): one error line naming the piece, a
# non-zero exit, the checkpoint before it whole, and the restart from it
# reproduces the uninterrupted run.  report: the disk fills halfway through
# a report record (the shim's byte limit); the record is cut back, and a
# cut record planted at the end is cut back by the restart, in one line.
foreach(piece forest state manifest report)
  foreach(np 1 2)
    amrdlb_add_test(NAME restart_full_disk_${piece}_np${np} RANKS ${np} LABELS app mpi restart
      COMMAND ${driver} --dir ${out}/full_${piece}_${np} --ranks ${np} --restart-ranks ${np} --kill-at 3 --compare exact
              --fail-write ${piece} --shim $<TARGET_FILE:failwrite> -- ${lshape})
  endforeach()
endforeach()

# The fault cases of issue 28 that have no test of their own, through the
# table script (tests/app/fault_cases.py, whose whole run of 60 cases takes
# minutes): a trace the disk fills halfway through a record (one line, the
# restart continues it whole), a restart whose trace was deleted (one
# line) and a checkpoint's ranks file whose writes fail (one line, the
# previous checkpoint restarts), on 1 and 2 ranks.
amrdlb_add_test(NAME restart_fault_cases_trace LABELS app mpi restart
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/fault_cases.py ${CMAKE_BINARY_DIR} --shim $<TARGET_FILE:failwrite>
          --work ${CMAKE_CURRENT_BINARY_DIR}/fault_cases --mpiexec "${MPIEXEC_EXECUTABLE} ${AMRDLB_MPIEXEC_PREFLAGS}"
          --only "trace: disk fills,restart: trace deleted,ranks write fails" --check
  PASS_REGEX "3 cases, 0 failing")
set_tests_properties(restart_fault_cases_trace PROPERTIES PROCESSORS 2)
# The 20 cases of issue 43 through the same script, on 1 and 2 ranks: a
# restart beside another run's report or trace, FIFOs and folders where
# the programs read or write, a stale OMPIO semaphore at 0 of the forest's
# name, checkpoint states edited against their forest (checksums
# matching), options whose values would fail inside, a 5000-character
# path, lbbench's overflowing loads.
amrdlb_add_test(NAME fault_cases_issue43 LABELS app mpi restart badinput
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/fault_cases.py ${CMAKE_BINARY_DIR} --shim $<TARGET_FILE:failwrite>
          --work ${CMAKE_CURRENT_BINARY_DIR}/fault_cases43 --mpiexec "${MPIEXEC_EXECUTABLE} ${AMRDLB_MPIEXEC_PREFLAGS}"
          --only "another run,FIFO,semaphore,cycle.,folder,lb_window,lb_cost,5000,-base" --check
  PASS_REGEX "20 cases, 0 failing")
set_tests_properties(fault_cases_issue43 PROPERTIES PROCESSORS 2 TIMEOUT 900)
# A checkpoint whose lb.cycles_wall (the summary's split of the wall) is
# -1, its checksums matching: refused in one line naming it, on 1 and 2
# ranks.
amrdlb_add_test(NAME fault_cases_cycles_wall LABELS app mpi restart badinput
  COMMAND ${AMRDLB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/fault_cases.py ${CMAKE_BINARY_DIR} --shim $<TARGET_FILE:failwrite>
          --work ${CMAKE_CURRENT_BINARY_DIR}/fault_cases_wall --mpiexec "${MPIEXEC_EXECUTABLE} ${AMRDLB_MPIEXEC_PREFLAGS}"
          --only "lb.cycles_wall" --check
  PASS_REGEX "1 cases, 0 failing")
set_tests_properties(fault_cases_cycles_wall PROPERTIES PROCESSORS 2)
