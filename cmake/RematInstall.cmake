# Install and export (docs/use-in-your-pipeline.md, "Linking"):
#
#   cmake --install build --prefix P
#
# puts the libraries and RematPlugin.so in P/lib, the tools in P/bin, the
# public headers with the generated .inc files (and the .td files) in
# P/include/remat, and RematConfig.cmake, RematConfigVersion.cmake and
# RematTargets.cmake in P/lib/cmake/remat. A consumer writes
#
#   find_package(Remat CONFIG REQUIRED)
#   target_link_libraries(x PRIVATE Remat::Passes)   # or Remat::Core
#
# Imported targets (the libraries are static; their link dependencies travel
# with them):
#   Remat::Core    - INTERFACE: Solvers, Schedule, Structure, Graph, Support
#                    (pure C++ on the shared LLVM library, CBC/CLP for
#                    Checkmate); no MLIR.
#   Remat::Passes  - INTERFACE: Dialect, Transforms, Interfaces (+ Core), on
#                    the shared MLIR and LLVM libraries.
#   Remat::Solvers, Remat::Schedule, Remat::Structure, Remat::Graph,
#   Remat::Support, Remat::Dialect, Remat::Transforms, Remat::Interfaces -
#   the libraries.
#   Remat::CpuRuntime (shared; remat-run's counting allocator),
#   Remat::CudaRuntime (shared, when built), Remat::Plugin (the mlir-opt
#   plugin module, for $<TARGET_FILE:Remat::Plugin>).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(REMAT_INSTALL_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/remat)

# The libraries, by component, with the names they are exported under.
# Dependents first: the order of the static libraries on a link line.
set(REMAT_CORE_LIBRARIES Solvers Schedule Structure Graph Support)
set(REMAT_PASSES_LIBRARIES Dialect Transforms Interfaces)
foreach(component IN LISTS REMAT_CORE_LIBRARIES REMAT_PASSES_LIBRARIES)
  set(lib Remat${component})
  set_target_properties(${lib} PROPERTIES EXPORT_NAME ${component})
  # Headers: the directory-level include_directories of the build are not
  # exported; the installed tree has them all under include/.
  target_include_directories(${lib} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_compile_features(${lib} INTERFACE cxx_std_17)
endforeach()

add_library(RematCore INTERFACE)
set_target_properties(RematCore PROPERTIES EXPORT_NAME Core)
foreach(component IN LISTS REMAT_CORE_LIBRARIES)
  target_link_libraries(RematCore INTERFACE Remat${component})
endforeach()
add_library(RematPasses INTERFACE)
set_target_properties(RematPasses PROPERTIES EXPORT_NAME Passes)
target_link_libraries(RematPasses INTERFACE RematCore RematDialect
  RematTransforms RematInterfaces)
# The same names inside this build, for consumers that add_subdirectory() us.
add_library(Remat::Core ALIAS RematCore)
add_library(Remat::Passes ALIAS RematPasses)

set_target_properties(RematCpuRuntime PROPERTIES EXPORT_NAME CpuRuntime)
set(REMAT_EXPORTED_TARGETS RematCore RematPasses RematCpuRuntime)
if(REMAT_BUILD_PLUGIN)
  set_target_properties(RematPlugin PROPERTIES EXPORT_NAME Plugin)
  list(APPEND REMAT_EXPORTED_TARGETS RematPlugin)
endif()
foreach(component IN LISTS REMAT_CORE_LIBRARIES REMAT_PASSES_LIBRARIES)
  list(APPEND REMAT_EXPORTED_TARGETS Remat${component})
endforeach()
if(REMAT_HAVE_CUDA)
  set_target_properties(RematCudaRuntime PROPERTIES EXPORT_NAME CudaRuntime)
  target_include_directories(RematCudaRuntime INTERFACE
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  list(APPEND REMAT_EXPORTED_TARGETS RematCudaRuntime)
  # The static CUDA runtime is what remat-run --target=gpu links into
  # executables; installed as a file, not exported (it needs libcuda).
  install(TARGETS RematCudaRuntimeStatic
    ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endif()

install(TARGETS ${REMAT_EXPORTED_TARGETS}
  EXPORT RematTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS remat-opt remat-run remat-solve
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Public headers and TableGen sources, then the generated declarations and
# definitions (Passes.h.inc, RematDialect.h.inc, RematOps.h.inc, ...).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/remat
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.def" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/remat
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)

install(EXPORT RematTargets
  NAMESPACE Remat::
  FILE RematTargets.cmake
  DESTINATION ${REMAT_INSTALL_CMAKE_DIR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/RematConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/RematConfig.cmake
  INSTALL_DESTINATION ${REMAT_INSTALL_CMAKE_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/RematConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES
  ${PROJECT_BINARY_DIR}/cmake/RematConfig.cmake
  ${PROJECT_BINARY_DIR}/cmake/RematConfigVersion.cmake
  DESTINATION ${REMAT_INSTALL_CMAKE_DIR})
