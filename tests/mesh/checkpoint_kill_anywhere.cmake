# A job killed (SIGKILL, by execute_process's timeout) at whatever point of
# a loop of checkpoint writes it has reached leaves a set that reads back
# intact: PROGRAM -loop is killed after each of DELAYS seconds, and each
# time PROGRAM -read -cycle -1 must find a complete cycle.  The delays only
# spread the kills over the write; the assertion holds at any instant.
string(REPLACE "|" ";" DELAYS "${DELAYS}")
file(GLOB _old "${PREFIX}.*")
if(_old)
  file(REMOVE ${_old})
endif()
# a set exists from the start, so that a machine too loaded to finish a
# write before the first kill still has something that must read intact
execute_process(COMMAND ${PROGRAM} -write -prefix ${PREFIX} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the first write failed (exit '${rc}')\n${out}${err}")
endif()
foreach(d ${DELAYS})
  execute_process(COMMAND ${PROGRAM} -loop -prefix ${PREFIX} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT ${d})
  if(rc MATCHES "^[0-9]+$")
    message(FATAL_ERROR "the -loop run ended by itself (exit ${rc}) instead of being killed\n${out}${err}")
  endif()
  execute_process(COMMAND ${PROGRAM} -read -cycle -1 -prefix ${PREFIX} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "read cycle [0-9]+: [0-9]+ cells, 0 with data differing from the writer's, 0 checks failed")
    message(FATAL_ERROR "killed after ${d} s, the checkpoint did not read back intact (exit '${rc}')\n${out}${err}")
  endif()
  string(REGEX MATCH "read cycle [0-9]+" c "${out}")
  message(STATUS "killed after ${d} s: ${c}")
endforeach()
