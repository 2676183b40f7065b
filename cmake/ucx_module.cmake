# The UCX transport module, libhetccl-ucx.so: the core links no UCX and
# dlopens the module at the first communicator that needs UCX, so the
# module is built only where UCX's headers are (Debian: libucx-dev) and a
# configure without them simply skips it. It lands in the build's src/
# directory, next to libnccl.so.2, and installs beside libhetccl. Included
# before the tests, which run the ucx layouts only where the module exists
# (HETCCL_UCX_MODULE_BUILT).
#
#   HETCCL_UCX_MODULE   AUTO | ON | OFF (AUTO: when pkg-config finds ucx)

set(HETCCL_UCX_MODULE AUTO CACHE STRING
    "Build libhetccl-ucx.so: AUTO (when UCX is found), ON or OFF")
set_property(CACHE HETCCL_UCX_MODULE PROPERTY STRINGS AUTO ON OFF)

set(HETCCL_UCX_MODULE_BUILT OFF)
if(HETCCL_UCX_MODULE STREQUAL "OFF")
  set(HETCCL_UCX_MODULE_WHY "HETCCL_UCX_MODULE=OFF")
else()
  find_package(PkgConfig QUIET)
  if(PkgConfig_FOUND)
    pkg_check_modules(HETCCL_UCX QUIET IMPORTED_TARGET ucx)
  endif()
  if(HETCCL_UCX_FOUND)
    set(HETCCL_UCX_MODULE_BUILT ON)
    set(HETCCL_UCX_MODULE_WHY "UCX ${HETCCL_UCX_VERSION}")
  elseif(HETCCL_UCX_MODULE STREQUAL "ON")
    message(FATAL_ERROR "HETCCL_UCX_MODULE=ON but pkg-config finds no ucx "
                        "(Debian: apt-get install libucx-dev)")
  else()
    set(HETCCL_UCX_MODULE_WHY "pkg-config finds no ucx (libucx-dev)")
  endif()
endif()

if(HETCCL_UCX_MODULE_BUILT)
  set(HETCCL_UCX_MODULE_EXPORTS ${PROJECT_BINARY_DIR}/ucx_module_exports.map)
  file(CONFIGURE OUTPUT ${HETCCL_UCX_MODULE_EXPORTS}
       CONTENT "{\n  global: hetcclUcxModule;\n  local: *;\n};\n")
  add_library(hetccl_ucx SHARED
    ${PROJECT_SOURCE_DIR}/src/transport/ucx/module/ucx_module.cc)
  target_include_directories(hetccl_ucx PRIVATE ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(hetccl_ucx PRIVATE PkgConfig::HETCCL_UCX)
  # Plain (unsanitised) like the device modules: UCX's own memory hooks and
  # a sanitised module do not mix, and sanitizer builds load it as it is.
  set_target_properties(hetccl_ucx PROPERTIES
    COMPILE_OPTIONS "-Wall;-Wextra;-Wno-unused-parameter"
    LINK_OPTIONS ""
    CXX_VISIBILITY_PRESET hidden
    OUTPUT_NAME hetccl-ucx
    LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/src
    LINK_DEPENDS ${HETCCL_UCX_MODULE_EXPORTS})
  target_link_options(hetccl_ucx PRIVATE
    -Wl,--version-script=${HETCCL_UCX_MODULE_EXPORTS} -Wl,--no-undefined)
endif()
message(STATUS "HetCCL UCX module (libhetccl-ucx.so): "
               "${HETCCL_UCX_MODULE_BUILT} (${HETCCL_UCX_MODULE_WHY})")

