# A check on measured time: run RUN1, RUN2, ... (as many as are given),
# then CHECK; the test passes when CHECK exits 0 and prints PASS (a
# regex).  A measurement of real time on a shared machine can be disturbed
# by another process or the host (CI's clean clone measured count weights'
# I% at 12-18 where 22-65 is usual, twice in a row), so a failed check is
# measured again, up to three times in all; three failures in a row fail
# the test with the message FAILURE (a rule or weights that do not work
# fail every attempt).  Commands
# arrive with "|" between words (a list cannot cross add_test intact).
set(runs)
foreach(i RANGE 1 9)
  if(NOT DEFINED RUN${i})
    break()
  endif()
  string(REPLACE "|" ";" RUN${i} "${RUN${i}}")
  list(APPEND runs RUN${i})
endforeach()
if(NOT runs OR NOT DEFINED CHECK OR NOT DEFINED PASS OR NOT DEFINED FAILURE)
  message(FATAL_ERROR "timing_check.cmake: needs -DRUN1=CMD [-DRUN2=CMD ...] -DCHECK=CMD -DPASS=REGEX -DFAILURE=TEXT")
endif()
string(REPLACE "|" ";" CHECK "${CHECK}")
foreach(attempt 1 2 3)
  foreach(run ${runs})
    execute_process(COMMAND ${${run}} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "run failed (${rc}): ${${run}}\n${out}${err}")
    endif()
  endforeach()
  execute_process(COMMAND ${CHECK} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  message("attempt ${attempt}:\n${out}${err}")
  if(rc EQUAL 0 AND out MATCHES "${PASS}")
    return()
  endif()
endforeach()
message(FATAL_ERROR "${FAILURE} in three measurements")
