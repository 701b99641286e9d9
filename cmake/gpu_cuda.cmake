# The CUDA backend of the GPU probes: libnodegate-gpu-cuda.so (src/gpu/cuda/),
# the table of collect/gpu_backend.h over the CUDA runtime (linked
# statically, so the library loads where libcudart is not on the loader's
# path), cuBLAS loaded at run time, and kernels of ours. Built only where
# CMake finds a CUDA compiler, and never in the sanitizer or fuzzing builds
# (their flags are for C). Without it the project configures, builds and
# tests as before; the GPU probes then say that no backend was found.
#
# -DNODEGATE_CUDA=OFF skips it; -DCMAKE_CUDA_ARCHITECTURES=90 (say) builds
# for fewer architectures than the default 80;90 (A100, H100/H200; newer
# GPUs run the compute_90 PTX).
option(NODEGATE_CUDA "Build the CUDA backend of the GPU probes where a CUDA compiler is found" ON)

include(CheckLanguage)
set(NG_CUDA_SKIP "")
if(NOT NODEGATE_CUDA)
  set(NG_CUDA_SKIP "NODEGATE_CUDA is OFF")
elseif(NODEGATE_SANITIZE)
  set(NG_CUDA_SKIP "a sanitizer build (NODEGATE_SANITIZE)")
elseif(NODEGATE_FUZZ)
  set(NG_CUDA_SKIP "a fuzzing build (NODEGATE_FUZZ)")
else()
  check_language(CUDA)
  if(NOT CMAKE_CUDA_COMPILER)
    set(NG_CUDA_SKIP "no CUDA compiler found")
  elseif(NOT EXISTS "${CMAKE_CUDA_COMPILER}")
    set(NG_CUDA_SKIP "CMAKE_CUDA_COMPILER ${CMAKE_CUDA_COMPILER} does not exist")
  endif()
endif()

if(NOT NG_CUDA_SKIP)
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "80;90" CACHE STRING "GPU architectures of the CUDA backend")
  endif()
  enable_language(CUDA)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  set(CMAKE_CUDA_EXTENSIONS OFF)
  # cuBLAS is loaded at run time; only its header's types are compiled in.
  find_path(NG_CUBLAS_API_H cublas_api.h HINTS ${CMAKE_CUDA_TOOLKIT_INCLUDE_DIRECTORIES})
  if(NOT NG_CUBLAS_API_H)
    set(NG_CUDA_SKIP "cublas_api.h not found beside ${CMAKE_CUDA_COMPILER}")
  endif()
endif()

if(NG_CUDA_SKIP)
  message(STATUS "CUDA backend of the GPU probes not built: ${NG_CUDA_SKIP}")
else()
  message(STATUS "CUDA backend of the GPU probes: ${CMAKE_CUDA_COMPILER} "
                 "${CMAKE_CUDA_COMPILER_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES}")
  add_library(nodegate-gpu-cuda SHARED
    src/gpu/cuda/backend.cu
    src/gpu/cuda/gemm.cu
    src/gpu/cuda/mem.cu
    src/gpu/cuda/copy.cu
  )
  target_include_directories(nodegate-gpu-cuda PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_include_directories(nodegate-gpu-cuda SYSTEM PRIVATE ${NG_CUBLAS_API_H})
  target_compile_options(nodegate-gpu-cuda PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Werror=all-warnings>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Werror>)
  # Only ng_gpu_backend_v1 leaves the library: not our helpers, not the
  # static CUDA runtime's symbols.
  set(NG_CUDA_EXPORTS ${CMAKE_SOURCE_DIR}/src/gpu/cuda/exports.map)
  target_link_options(nodegate-gpu-cuda PRIVATE
    "LINKER:--version-script=${NG_CUDA_EXPORTS}" "LINKER:--no-undefined")
  target_link_libraries(nodegate-gpu-cuda PRIVATE Threads::Threads ${CMAKE_DL_LIBS} rt)
  set_target_properties(nodegate-gpu-cuda PROPERTIES
    CUDA_RUNTIME_LIBRARY Static
    CUDA_VISIBILITY_PRESET hidden
    CUDA_SEPARABLE_COMPILATION OFF
    POSITION_INDEPENDENT_CODE ON
    LINK_DEPENDS ${NG_CUDA_EXPORTS}
    LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
endif()

# The GPU probes beside their references (bench/README.md): plain C, loads
# any backend by path (the CUDA one, or the synthetic one for a dry run), so
# it is built with or without CUDA.
add_executable(gpu_bench bench/gpu_bench.c)
target_include_directories(gpu_bench PRIVATE ${CMAKE_SOURCE_DIR}/src)
target_link_libraries(gpu_bench PRIVATE ${CMAKE_DL_LIBS} m)
set_target_properties(gpu_bench PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/bench)
