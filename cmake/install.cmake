# Install rules, CMake package config and pkg-config file.
#
# Layout under the prefix:
#   lib/libhetccl.so*            the library, under its own name
#   lib/hetccl/libnccl.so.2      drop-in copies, kept out of the default
#   lib/hetccl/librccl.so.1      search path so that installing HetCCL never
#                                shadows a real NCCL or RCCL by accident; use
#                                them with hetccl-run (LD_PRELOAD) or
#                                LD_LIBRARY_PATH=<prefix>/lib/hetccl
#   lib/hetccl/libhetccl-*.so    the run-time modules (CUDA, HIP, UCX, net)
#   include/hetccl/{nccl,hetccl}.h   apart from a real nccl.h
#   bin/hetccl-perf, bin/hetccl-info, bin/hetccl-run, bin/hetccl-doctor
#   lib/cmake/HetCCL/            find_package(HetCCL): HetCCL::hetccl,
#                                HetCCL::nccl, HetCCL::rccl
#   lib/pkgconfig/hetccl.pc
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(HETCCL_INSTALL_INCLUDEDIR ${CMAKE_INSTALL_INCLUDEDIR}/hetccl)
set(HETCCL_INSTALL_DROPIN_LIBDIR ${CMAKE_INSTALL_LIBDIR}/hetccl)
set(HETCCL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/HetCCL)

# Imported names: HetCCL::hetccl, HetCCL::nccl, HetCCL::rccl.
set_target_properties(hetccl PROPERTIES EXPORT_NAME hetccl)
set_target_properties(hetccl_nccl PROPERTIES EXPORT_NAME nccl)
set_target_properties(hetccl_rccl PROPERTIES EXPORT_NAME rccl)

# INCLUDES DESTINATION puts include/hetccl on the imported targets, so that
# consumers write #include <nccl.h> exactly as they would with NCCL.
# Each file belongs to one of the packages (cmake/packaging.cmake): runtime
# (the libraries and modules), dev (headers, the libhetccl.so link, CMake
# and pkg-config files), tools (bin/).
install(TARGETS hetccl EXPORT HetCCLTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
          NAMELINK_COMPONENT dev
  INCLUDES DESTINATION ${HETCCL_INSTALL_INCLUDEDIR})
install(TARGETS hetccl_nccl hetccl_rccl EXPORT HetCCLTargets
  LIBRARY DESTINATION ${HETCCL_INSTALL_DROPIN_LIBDIR} COMPONENT runtime
          NAMELINK_COMPONENT dev
  INCLUDES DESTINATION ${HETCCL_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/include/nccl.h
              ${PROJECT_SOURCE_DIR}/include/hetccl.h
  DESTINATION ${HETCCL_INSTALL_INCLUDEDIR} COMPONENT dev)

# Device-runtime and transport modules, dlopen'ed at run time; they exist
# only where a vendor toolkit (or UCX) was found (the net module always).
# They have no soname, so they stay out of the loader's directories, in the
# drop-ins' private folder (util/module_path.cc finds them there).
foreach(module hetccl_cuda hetccl_hip hetccl_ucx hetccl_net hetccl-cuda
               hetccl-hip)
  if(TARGET ${module})
    install(TARGETS ${module}
      LIBRARY DESTINATION ${HETCCL_INSTALL_DROPIN_LIBDIR} COMPONENT runtime
      RUNTIME DESTINATION ${HETCCL_INSTALL_DROPIN_LIBDIR} COMPONENT runtime)
  endif()
endforeach()

# Tools find libhetccl.so relative to themselves, wherever the prefix is.
foreach(tool hetccl-perf hetccl-info hetccl-run hetccl-doctor)
  if(TARGET ${tool})
    set_target_properties(${tool} PROPERTIES
      INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
      COMPONENT tools)
  endif()
endforeach()

# CMake package.
install(EXPORT HetCCLTargets
  NAMESPACE HetCCL::
  FILE HetCCLTargets.cmake
  DESTINATION ${HETCCL_INSTALL_CMAKEDIR} COMPONENT dev)
configure_package_config_file(
  ${CMAKE_CURRENT_LIST_DIR}/HetCCLConfig.cmake.in
  ${PROJECT_BINARY_DIR}/HetCCLConfig.cmake
  INSTALL_DESTINATION ${HETCCL_INSTALL_CMAKEDIR}
  PATH_VARS HETCCL_INSTALL_INCLUDEDIR HETCCL_INSTALL_DROPIN_LIBDIR)
# 0.x releases may break compatibility with each minor version.
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/HetCCLConfigVersion.cmake
  VERSION ${PROJECT_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/HetCCLConfig.cmake
              ${PROJECT_BINARY_DIR}/HetCCLConfigVersion.cmake
  DESTINATION ${HETCCL_INSTALL_CMAKEDIR} COMPONENT dev)

# pkg-config. The file finds the prefix relative to itself (${pcfiledir}),
# so it stays right when `cmake --install --prefix` or DESTDIR moves the
# tree; absolute install directories are written as they are.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(HETCCL_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  file(RELATIVE_PATH HETCCL_PC_UP
    "/prefix/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/prefix")
  string(REGEX REPLACE "/$" "" HETCCL_PC_UP "${HETCCL_PC_UP}")
  set(HETCCL_PC_PREFIX "\${pcfiledir}/${HETCCL_PC_UP}")
endif()
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(HETCCL_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(HETCCL_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/hetccl.pc.in
  ${PROJECT_BINARY_DIR}/hetccl.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/hetccl.pc
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig COMPONENT dev)
