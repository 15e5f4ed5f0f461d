# CUDA detection (docs/gpu.md). Only the CUDA runtime library
# (lib/Runtime/CudaRuntime.cpp) and the executables of remat-run --target=gpu
# need the toolkit: the driver API header and libcuda (the stub library is
# enough to link; the real driver is loaded at run time). The GPU pipeline
# itself needs no toolkit for format=ptx; for cubin/fatbin it uses ptxas and
# fatbinary from REMAT_CUDA_TOOLKIT_PATH. Everything else builds and tests
# without CUDA.
option(REMAT_ENABLE_CUDA "Build the CUDA runtime when the toolkit is found" ON)
set(REMAT_HAVE_CUDA OFF)
set(REMAT_CUDA_TOOLKIT_PATH "")
if(REMAT_ENABLE_CUDA)
  if(NOT DEFINED CUDAToolkit_ROOT AND NOT DEFINED ENV{CUDAToolkit_ROOT}
     AND EXISTS /usr/local/cuda/bin)
    set(CUDAToolkit_ROOT /usr/local/cuda)
  endif()
  find_package(CUDAToolkit QUIET)
  if(CUDAToolkit_FOUND)
    get_filename_component(REMAT_CUDA_TOOLKIT_PATH "${CUDAToolkit_BIN_DIR}"
                           DIRECTORY)
    if(TARGET CUDA::cuda_driver)
      set(REMAT_HAVE_CUDA ON)
      get_target_property(REMAT_CUDA_DRIVER_LIBRARY CUDA::cuda_driver
                          IMPORTED_LOCATION)
    endif()
  endif()
endif()
if(REMAT_HAVE_CUDA)
  message(STATUS "CUDA toolkit ${CUDAToolkit_VERSION} at "
                 "${REMAT_CUDA_TOOLKIT_PATH}: building the CUDA runtime "
                 "(driver library ${REMAT_CUDA_DRIVER_LIBRARY})")
else()
  message(STATUS "No CUDA toolkit with the driver API: the CUDA runtime and "
                 "remat-run --target=gpu executables are not built")
endif()
