# The balancer as another code uses it: cmake --install of BUILD into
# WORK/prefix, then tests/balance/install_example built against the
# installed copy twice, through find_package(amrdlb-balance) and through
# pkg-config (amrdlb-balance, compiled with MPICC, the flags of a plain
# `pkg-config --cflags --libs`), and each program run on 4 MPI ranks
# (MPIEXEC: the launcher and its flags, | between words).
# LIBDIR: CMAKE_INSTALL_LIBDIR.
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()
file(REMOVE_RECURSE ${WORK})
run("cmake --install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
run("configuring the example" ${CMAKE_COMMAND} -S ${SOURCE} -B ${WORK}/build -DCMAKE_PREFIX_PATH=${WORK}/prefix)
run("building the example" ${CMAKE_COMMAND} --build ${WORK}/build)
string(REPLACE "|" ";" mpiexec "${MPIEXEC}")
run("the example (CMake package)" ${mpiexec} -n 4 ${WORK}/build/example)
message("find_package: ${out}")
run("the offload example on 4 ranks" ${mpiexec} -n 4 ${WORK}/build/offload)
message("offload example: ${out}")
set(ENV{PKG_CONFIG_PATH} ${WORK}/prefix/${LIBDIR}/pkgconfig)
run("pkg-config" pkg-config --cflags --libs amrdlb-balance)
separate_arguments(flags UNIX_COMMAND "${out}")
run("compiling the example with pkg-config's flags" ${MPICC} ${SOURCE}/example.c ${flags} -o ${WORK}/example_pc)
run("the example (pkg-config)" ${mpiexec} -n 4 ${WORK}/example_pc)
message("pkg-config: ${out}")
