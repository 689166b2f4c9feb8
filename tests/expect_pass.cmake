# Runs the command after "--" and checks the passing contract: exit status
# 0 (a signal or timeout is a failure), no line of a failed assertion
# (tests/check.h, a Python traceback, a PETSc error trace), and, when
# REGEX is given, output matching it.  CTest's own PASS_REGULAR_EXPRESSION
# ignores the exit status, so a run that crashed after printing its line
# passed; here both are asserted.
set(cmd "")
set(after OFF)
math(EXPR last "${CMAKE_ARGC} - 1")
foreach(i RANGE ${last})
  if(after)
    # a ";" would split the argument in two: refused, not run otherwise
    if(CMAKE_ARGV${i} MATCHES ";")
      message(FATAL_ERROR "expect_pass.cmake: argument '${CMAKE_ARGV${i}}' has a ';', which a CMake list cannot hold")
    endif()
    list(APPEND cmd "${CMAKE_ARGV${i}}")
  elseif(CMAKE_ARGV${i} STREQUAL "--")
    set(after ON)
  endif()
endforeach()
if(NOT cmd)
  message(FATAL_ERROR "expect_pass.cmake: no command after --")
endif()
# REMOVE: the files and folders the command writes for other tests to
# read ("|" between them), gone before it runs so none is from an earlier run
if(DEFINED REMOVE)
  string(REPLACE "|" ";" REMOVE "${REMOVE}")
  file(REMOVE_RECURSE ${REMOVE})
endif()
execute_process(COMMAND ${cmd} RESULT_VARIABLE rc OUTPUT_VARIABLE all ERROR_VARIABLE all
  ECHO_OUTPUT_VARIABLE ECHO_ERROR_VARIABLE)
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "expected exit status 0, got '${rc}'")
endif()
string(REGEX MATCH "[^\n]*(check failed|Traceback \\(most recent call last\\)|PETSC ERROR)[^\n]*" bad "${all}")
if(bad)
  message(FATAL_ERROR "exit status 0, but the output has a failure: ${bad}")
endif()
if(DEFINED REGEX AND NOT all MATCHES "${REGEX}")
  message(FATAL_ERROR "exit status 0, but the output does not match '${REGEX}'")
endif()
