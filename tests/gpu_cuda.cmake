# The CUDA backend (cmake/gpu_cuda.cmake), where it is built: the library
# loads, exports its table and nothing of the CUDA runtime, and either says
# why there is no GPU (no driver: a reason, never a crash or a number) or,
# on a GPU machine, runs each operation small and checks its answers
# (`ctest -R gpu` in bench/gpu-device-check).
if(TARGET nodegate-gpu-cuda)
  add_executable(test_gpu_cuda_load unit/test_gpu_cuda_load.c)
  target_include_directories(test_gpu_cuda_load PRIVATE ${CMAKE_SOURCE_DIR}/src)
  target_link_libraries(test_gpu_cuda_load PRIVATE ${CMAKE_DL_LIBS})
  add_dependencies(test_gpu_cuda_load nodegate-gpu-cuda)
  add_test(NAME gpu_cuda_load COMMAND test_gpu_cuda_load $<TARGET_FILE:nodegate-gpu-cuda>)
  set_tests_properties(gpu_cuda_load PROPERTIES TIMEOUT 300)
endif()
