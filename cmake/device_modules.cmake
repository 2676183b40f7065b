# The device-runtime modules: libhetccl-cuda.so (nvcc) and libhetccl-hip.so
# (hipcc). The core links neither toolkit and dlopens the modules at run
# time, so each is built only where its compiler exists; a configure without
# nvcc or hipcc simply skips it. Both land in the build's src/ directory,
# next to libnccl.so.2, and install beside libhetccl (cmake/install.cmake
# installs the targets hetccl_cuda and hetccl_hip when they exist).
#
#   HETCCL_CUDA_MODULE        AUTO | ON | OFF (AUTO: when nvcc is found)
#   HETCCL_CUDA_ARCHITECTURES CUDA_ARCHITECTURES of the module
#   HETCCL_HIP_MODULE         AUTO | ON | OFF (AUTO: when hipcc works)
#   HETCCL_HIP_ARCHITECTURES  --offload-arch targets of the module
#
# Included from the top-level CMakeLists.txt after the tests, so that the
# unit test of the modules can be told where they are.

set(HETCCL_CUDA_MODULE AUTO CACHE STRING
    "Build libhetccl-cuda.so: AUTO (when nvcc is found), ON or OFF")
set_property(CACHE HETCCL_CUDA_MODULE PROPERTY STRINGS AUTO ON OFF)
set(HETCCL_CUDA_ARCHITECTURES "80-real;90-real;90-virtual" CACHE STRING
    "CUDA architectures of libhetccl-cuda.so (sm_80, sm_90 and PTX for newer)")
set(HETCCL_HIP_MODULE AUTO CACHE STRING
    "Build libhetccl-hip.so: AUTO (when hipcc works), ON or OFF")
set_property(CACHE HETCCL_HIP_MODULE PROPERTY STRINGS AUTO ON OFF)
set(HETCCL_HIP_ARCHITECTURES "gfx908;gfx90a;gfx1030" CACHE STRING
    "AMD GPU targets (--offload-arch) of libhetccl-hip.so")

set(HETCCL_DEVICE_KERNELS_HEADER
    ${PROJECT_SOURCE_DIR}/src/runtime/device/device_kernels.h
    ${PROJECT_SOURCE_DIR}/src/runtime/reduce_ops.h)

# Only the entry point leaves a module. Everything else, the statically
# linked CUDA runtime above all, stays local: a program that loaded its own
# libcudart must never have the module's calls land in it, nor the reverse.
set(HETCCL_DEVICE_MODULE_EXPORTS
    ${PROJECT_BINARY_DIR}/device_module_exports.map)
file(CONFIGURE OUTPUT ${HETCCL_DEVICE_MODULE_EXPORTS}
     CONTENT "{\n  global: hetcclDeviceModule;\n  local: *;\n};\n")

# Output name and place, exports, and no undefined symbols. The modules do
# not take the directory's compile and link options (nvcc rejects -Wall,
# and sanitizer builds of the core load plain modules).
function(hetccl_device_module_properties target output)
  set_target_properties(${target} PROPERTIES
    COMPILE_OPTIONS ""
    LINK_OPTIONS ""
    OUTPUT_NAME ${output}
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/src
    LINK_DEPENDS ${HETCCL_DEVICE_MODULE_EXPORTS})
  target_link_options(${target} PRIVATE
    -Wl,--version-script=${HETCCL_DEVICE_MODULE_EXPORTS}
    -Wl,--exclude-libs,ALL -Wl,--no-undefined)
endfunction()

# ---- CUDA ----

# A macro: check_language sets CMAKE_CUDA_COMPILER in the caller's scope.
macro(hetccl_find_nvcc)
  # check_language looks at CUDACXX and PATH; the toolkit's default place
  # is tried too, for shells whose PATH lacks it.
  if(NOT DEFINED CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX})
    find_program(HETCCL_NVCC_IN_PATH nvcc)
    if(NOT HETCCL_NVCC_IN_PATH AND EXISTS /usr/local/cuda/bin/nvcc)
      set(ENV{CUDACXX} /usr/local/cuda/bin/nvcc)
    endif()
  endif()
  include(CheckLanguage)
  check_language(CUDA)
endmacro()

set(HETCCL_CUDA_MODULE_BUILT OFF)
if(HETCCL_CUDA_MODULE STREQUAL "OFF")
  set(HETCCL_CUDA_MODULE_WHY "HETCCL_CUDA_MODULE=OFF")
else()
  hetccl_find_nvcc()
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      set(CMAKE_CUDA_ARCHITECTURES ${HETCCL_CUDA_ARCHITECTURES})
    endif()
    enable_language(CUDA)
    find_package(CUDAToolkit REQUIRED)
    set(HETCCL_CUDA_MODULE_BUILT ON)
    set(HETCCL_CUDA_MODULE_WHY "nvcc ${CMAKE_CUDA_COMPILER_VERSION} at \
${CMAKE_CUDA_COMPILER}, architectures ${HETCCL_CUDA_ARCHITECTURES}")
  elseif(HETCCL_CUDA_MODULE STREQUAL "ON")
    message(FATAL_ERROR "HETCCL_CUDA_MODULE=ON but no working nvcc was found "
                        "(set CUDACXX or CMAKE_CUDA_COMPILER)")
  else()
    set(HETCCL_CUDA_MODULE_WHY
        "no working nvcc (looked at CUDACXX, PATH, /usr/local/cuda/bin)")
  endif()
endif()

if(HETCCL_CUDA_MODULE_BUILT)
  add_library(hetccl_cuda SHARED
    ${PROJECT_SOURCE_DIR}/src/runtime/cuda/cuda_module.cu
    ${PROJECT_SOURCE_DIR}/src/runtime/cuda/cuda_reduce.cu
    ${PROJECT_SOURCE_DIR}/src/runtime/cuda/cuda_stream_memops.cc
    ${PROJECT_SOURCE_DIR}/src/runtime/cuda/cuda_driver.cc
    ${PROJECT_SOURCE_DIR}/src/runtime/cuda/cuda_dma_buf.cc)
  target_include_directories(hetccl_cuda PRIVATE
    ${PROJECT_SOURCE_DIR}/include ${PROJECT_SOURCE_DIR}/src)
  # The driver is reached through the runtime's driver entry points only:
  # no libcuda at link time, so the module loads without a driver.
  target_link_libraries(hetccl_cuda PRIVATE CUDA::cudart_static)
  set_target_properties(hetccl_cuda PROPERTIES
    CUDA_ARCHITECTURES "${HETCCL_CUDA_ARCHITECTURES}"
    CUDA_RUNTIME_LIBRARY None
    CUDA_STANDARD 17
    CUDA_STANDARD_REQUIRED ON
    CXX_VISIBILITY_PRESET hidden
    CUDA_VISIBILITY_PRESET hidden)
  hetccl_device_module_properties(hetccl_cuda hetccl-cuda)
  # Bitwise equality with the host collectives: no fused multiply-add, IEEE
  # division and subnormals (the last two are nvcc's defaults; stated so
  # that a global flag cannot change them silently).
  target_compile_options(hetccl_cuda PRIVATE
    "$<$<COMPILE_LANGUAGE:CUDA>:-fmad=false;-prec-div=true;-ftz=false>"
    "$<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra,-Wno-unused-parameter>"
    "$<$<COMPILE_LANGUAGE:CXX>:-Wall;-Wextra;-Wno-unused-parameter>")
endif()

# ---- HIP ----
#
# Debian's hipcc (a perl wrapper around clang) does not work as CMake's HIP
# language, so the module is compiled by a custom command and linked by the
# C++ compiler against libamdhip64.

set(HETCCL_HIP_MODULE_SOURCE ${PROJECT_SOURCE_DIR}/src/runtime/hip/hip_module.cc)

function(hetccl_hip_compile_flags out)
  set(flags -x hip -std=c++17 -O3 -fPIC -fvisibility=hidden
            -ffp-contract=off -Wall -Wextra -Wno-unused-parameter)
  foreach(arch ${HETCCL_HIP_ARCHITECTURES})
    list(APPEND flags --offload-arch=${arch})
  endforeach()
  set(${out} ${flags} PARENT_SCOPE)
endfunction()

# Whether hipcc compiles a kernel for the chosen targets (a hipcc without
# the ROCm device libraries, say, fails here rather than in the build).
function(hetccl_hip_works out why)
  find_program(HETCCL_HIPCC hipcc HINTS ENV ROCM_PATH /opt/rocm
               PATH_SUFFIXES bin)
  find_library(HETCCL_AMDHIP64 amdhip64 HINTS ENV ROCM_PATH /opt/rocm
               PATH_SUFFIXES lib)
  if(NOT HETCCL_HIPCC OR NOT HETCCL_AMDHIP64)
    set(${out} OFF PARENT_SCOPE)
    set(${why} "no hipcc or no libamdhip64 (Debian: hipcc, libamdhip64-dev)"
        PARENT_SCOPE)
    return()
  endif()
  set(dir ${PROJECT_BINARY_DIR}/CMakeFiles/HetcclHipCheck)
  file(WRITE ${dir}/check.cc
       "#include <hip/hip_runtime.h>\n"
       "__global__ void check(float* x) { x[threadIdx.x] += 1.0f; }\n")
  hetccl_hip_compile_flags(flags)
  execute_process(
    COMMAND ${HETCCL_HIPCC} ${flags} -c ${dir}/check.cc -o ${dir}/check.o
    RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  if(NOT result EQUAL 0)
    set(${out} OFF PARENT_SCOPE)
    set(${why} "${HETCCL_HIPCC} cannot compile for \
${HETCCL_HIP_ARCHITECTURES}: ${result} ${output}" PARENT_SCOPE)
    return()
  endif()
  set(${out} ON PARENT_SCOPE)
  set(${why} "hipcc at ${HETCCL_HIPCC}, targets ${HETCCL_HIP_ARCHITECTURES}"
      PARENT_SCOPE)
endfunction()

set(HETCCL_HIP_MODULE_BUILT OFF)
if(HETCCL_HIP_MODULE STREQUAL "OFF")
  set(HETCCL_HIP_MODULE_WHY "HETCCL_HIP_MODULE=OFF")
else()
  hetccl_hip_works(HETCCL_HIP_MODULE_BUILT HETCCL_HIP_MODULE_WHY)
  if(NOT HETCCL_HIP_MODULE_BUILT AND HETCCL_HIP_MODULE STREQUAL "ON")
    message(FATAL_ERROR "HETCCL_HIP_MODULE=ON: ${HETCCL_HIP_MODULE_WHY}")
  endif()
endif()

if(HETCCL_HIP_MODULE_BUILT)
  set(object ${CMAKE_CURRENT_BINARY_DIR}/hetccl_hip.dir/hip_module.o)
  hetccl_hip_compile_flags(flags)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/hetccl_hip.dir)
  add_custom_command(
    OUTPUT ${object}
    COMMAND ${HETCCL_HIPCC} ${flags}
            -I${PROJECT_SOURCE_DIR}/include -I${PROJECT_SOURCE_DIR}/src
            -MD -MF ${object}.d
            -c ${HETCCL_HIP_MODULE_SOURCE} -o ${object}
    DEPENDS ${HETCCL_HIP_MODULE_SOURCE} ${HETCCL_DEVICE_KERNELS_HEADER}
    DEPFILE ${object}.d
    COMMENT "Building HIP object hip_module.o (hipcc)"
    VERBATIM)
  add_library(hetccl_hip SHARED ${object})
  set_source_files_properties(${object} PROPERTIES
    EXTERNAL_OBJECT TRUE GENERATED TRUE)
  set_target_properties(hetccl_hip PROPERTIES LINKER_LANGUAGE CXX)
  target_link_libraries(hetccl_hip PRIVATE ${HETCCL_AMDHIP64})
  hetccl_device_module_properties(hetccl_hip hetccl-hip)
endif()

message(STATUS "HetCCL CUDA module (libhetccl-cuda.so): "
               "${HETCCL_CUDA_MODULE_BUILT}: ${HETCCL_CUDA_MODULE_WHY}")
message(STATUS "HetCCL HIP module (libhetccl-hip.so): "
               "${HETCCL_HIP_MODULE_BUILT}: ${HETCCL_HIP_MODULE_WHY}")

# ---- Tests ----

# The unit test loads whichever modules were built; without one, its cases
# are skipped.
if(TARGET test_device_module_table)
  foreach(runtime CUDA HIP)
    string(TOLOWER ${runtime} name)
    if(HETCCL_${runtime}_MODULE_BUILT)
      target_compile_definitions(test_device_module_table PRIVATE
        HETCCL_${runtime}_MODULE_PATH="$<TARGET_FILE:hetccl_${name}>")
      add_dependencies(test_device_module_table hetccl_${name})
    endif()
  endforeach()
endif()

# The GPU check of a module (run on a GPU machine: device_module_check
# <path of libhetccl-cuda.so or libhetccl-hip.so>). Plain C++: it reaches
# the GPU through the module's table only.
if(HETCCL_CUDA_MODULE_BUILT OR HETCCL_HIP_MODULE_BUILT)
  add_executable(device_module_check
    ${PROJECT_SOURCE_DIR}/tests/gpu/device_module_check.cc)
  target_link_libraries(device_module_check PRIVATE hetccl_internal
                                                    ${CMAKE_DL_LIBS})
  target_include_directories(device_module_check
                             PRIVATE ${PROJECT_SOURCE_DIR}/tests/unit)
  foreach(name cuda hip)
    if(TARGET hetccl_${name})
      add_dependencies(device_module_check hetccl_${name})
    endif()
  endforeach()
endif()

# The stream checks of heterogeneous communicators on GPU buffers (2 GPUs:
# hetero_stream_check <path of libhetccl-cuda.so>). It holds streams back
# through the module and captures graphs through the CUDA runtime.
if(HETCCL_CUDA_MODULE_BUILT)
  add_executable(hetero_stream_check
    ${PROJECT_SOURCE_DIR}/tests/gpu/hetero_stream_check.cc)
  target_include_directories(hetero_stream_check PRIVATE
    ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(hetero_stream_check PRIVATE hetccl CUDA::cudart
                                                    ${CMAKE_DL_LIBS})
  add_dependencies(hetero_stream_check hetccl_cuda)

  # One process driving several GPUs (tests/gpu/single_process_check.cc):
  # linked by soname against libnccl.so.2, HetCCL's here, NVIDIA's when it
  # is preloaded, so the same program runs against both.
  add_executable(single_process_check
    ${PROJECT_SOURCE_DIR}/tests/gpu/single_process_check.cc)
  target_link_libraries(single_process_check PRIVATE hetccl_nccl CUDA::cudart
                                                     Threads::Threads)

  # What the pass-through adds to small collectives (bench/, 2 GPUs:
  # passthrough_overhead <NVIDIA libnccl.so.2>).
  add_executable(passthrough_overhead
    ${PROJECT_SOURCE_DIR}/bench/passthrough_overhead.cc)
  target_link_libraries(passthrough_overhead PRIVATE hetccl CUDA::cudart
                                                     ${CMAKE_DL_LIBS})
endif()
