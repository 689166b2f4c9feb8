# A job SIGKILLed after staging a new checkpoint (its forest file truncated
# as if the kill came mid-write) must leave the previous one readable:
# run PROGRAM -kill, which writes cycle 1, stages cycle 2 and kills every
# rank before the commit, then read the set and expect cycle 1 intact.
string(REPLACE "|" ";" MPIEXEC "${MPIEXEC}")
file(GLOB _old "${PREFIX}.*")
if(_old)
  file(REMOVE ${_old})
endif()
execute_process(COMMAND ${MPIEXEC} ${PROGRAM} -kill -prefix ${PREFIX} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
if(rc EQUAL 0)
  message(FATAL_ERROR "the -kill run exited normally, it should have been killed\n${out}${err}")
endif()
if(NOT EXISTS "${PREFIX}.manifest.new" OR NOT EXISTS "${PREFIX}.2.forest")
  message(FATAL_ERROR "the -kill run died before staging cycle 2 (exit '${rc}')\n${out}${err}")
endif()
execute_process(COMMAND ${MPIEXEC} ${PROGRAM} -read -cycle 1 -prefix ${PREFIX} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
if(NOT rc EQUAL 0 OR NOT out MATCHES "read cycle 1: [0-9]+ cells, 0 with data differing from the writer's, 0 checks failed")
  message(FATAL_ERROR "the previous checkpoint was not read intact (exit '${rc}')\n${out}${err}")
endif()
message(STATUS "killed before the commit, exit '${rc}' of the read: ${out}")
