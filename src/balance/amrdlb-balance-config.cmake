# find_package(amrdlb-balance): the balancer library of amrdlb as the
# imported target amrdlb::balance, with what it links (MPI, LAPACKE).
include(CMakeFindDependencyMacro)
find_dependency(MPI COMPONENTS C)
find_dependency(PkgConfig)
pkg_check_modules(LAPACKE REQUIRED IMPORTED_TARGET lapacke)
include("${CMAKE_CURRENT_LIST_DIR}/amrdlb-balance-targets.cmake")
