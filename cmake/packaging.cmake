# Debian packages from the install rules (cmake/install.cmake), one per
# component: `cpack -G DEB` in a build tree, or scripts/build-packages.sh.
#   libhetccl0     runtime: libhetccl.so.0, the drop-ins and the modules
#                  (lib/<triplet>/hetccl/), as built here
#   libhetccl-dev  dev: headers, libhetccl.so, CMake package, pkg-config
#   hetccl-tools   tools: hetccl-perf, hetccl-info, hetccl-run, hetccl-doctor
# Every file lies under /usr. Dependencies on Debian's libraries come from
# dpkg-shlibdeps; the UCX module, where built, recommends libucx0.

set(HETCCL_DEB_RUNTIME libhetccl${PROJECT_VERSION_MAJOR})
set(HETCCL_DEB_DEV libhetccl-dev)
set(HETCCL_DEB_TOOLS hetccl-tools)

# Each package's copyright file and changelog (Debian policy 12.5, 12.7).
set(HETCCL_DEB_CHANGELOG ${PROJECT_BINARY_DIR}/debian/changelog.gz)
file(MAKE_DIRECTORY ${PROJECT_BINARY_DIR}/debian)
add_custom_command(OUTPUT ${HETCCL_DEB_CHANGELOG}
  COMMAND gzip -9n -c ${CMAKE_CURRENT_LIST_DIR}/debian/changelog
          > ${HETCCL_DEB_CHANGELOG}
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/debian/changelog)
add_custom_target(hetccl_deb_changelog ALL DEPENDS ${HETCCL_DEB_CHANGELOG})
# The tools' manual pages, compressed as Debian installs them.
set(HETCCL_DEB_MAN_PAGES)
foreach(tool hetccl-run hetccl-doctor hetccl-perf hetccl-info)
  set(page ${PROJECT_BINARY_DIR}/debian/${tool}.1.gz)
  add_custom_command(OUTPUT ${page}
    COMMAND gzip -9n -c ${CMAKE_CURRENT_LIST_DIR}/debian/man/${tool}.1 > ${page}
    DEPENDS ${CMAKE_CURRENT_LIST_DIR}/debian/man/${tool}.1)
  list(APPEND HETCCL_DEB_MAN_PAGES ${page})
endforeach()
add_custom_target(hetccl_man_pages ALL DEPENDS ${HETCCL_DEB_MAN_PAGES})
install(FILES ${HETCCL_DEB_MAN_PAGES}
  DESTINATION ${CMAKE_INSTALL_MANDIR}/man1 COMPONENT tools)
foreach(component runtime dev tools)
  string(TOUPPER ${component} upper)
  install(FILES ${CMAKE_CURRENT_LIST_DIR}/debian/copyright
                ${HETCCL_DEB_CHANGELOG}
    DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/${HETCCL_DEB_${upper}}
    COMPONENT ${component})
endforeach()

# What the runtime package holds of the optional modules, for its
# description (lines of the control file: CPack indents them; a ';' would
# split them).
set(HETCCL_DEB_MODULES "")
foreach(module CUDA HIP UCX)
  if(HETCCL_${module}_MODULE_BUILT)
    string(APPEND HETCCL_DEB_MODULES "\nThe ${module} module is included.")
  else()
    string(REPLACE ";" ", " why "${HETCCL_${module}_MODULE_WHY}")
    string(APPEND HETCCL_DEB_MODULES
      "\nThe ${module} module is not included, because:\n${why}.")
  endif()
endforeach()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME hetccl)
set(CPACK_PACKAGE_VENDOR "HetCCL developers")
# Who builds the packages signs them: set it for a cluster's own build.
set(HETCCL_PACKAGE_MAINTAINER "HetCCL developers <hetccl@example.org>"
    CACHE STRING "the Maintainer of the Debian packages")
set(CPACK_PACKAGE_CONTACT "${HETCCL_PACKAGE_MAINTAINER}")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL runtime dev tools)
set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The tools' libhetccl.so.0 is the runtime package's, which they depend on
# by name: dpkg-shlibdeps finds it in the build tree.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS
    ${PROJECT_BINARY_DIR}/src)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)

set(CPACK_DEBIAN_RUNTIME_PACKAGE_NAME ${HETCCL_DEB_RUNTIME})
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SECTION libs)
set(CPACK_DEBIAN_RUNTIME_DESCRIPTION
"collective communication across NVIDIA, AMD and CPU ranks
HetCCL exports the NCCL C API, so that an unchanged program (PyTorch,
Megatron, DeepSpeed) loads it as its libnccl.so.2 or librccl.so.1. Among
GPUs of one vendor it hands the work to that vendor's library, and where
ranks of different vendors meet it runs its own cross-vendor algorithms
over shared memory, TCP, UCX or an NCCL network plugin.

This package holds libhetccl.so.0 and, in a folder of their own, the
drop-in libnccl.so.2 and librccl.so.1 (hetccl-run preloads them) and the
run-time modules.${HETCCL_DEB_MODULES}")
# The loader's cache follows the library through dpkg's ldconfig trigger.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_EXTRA
    ${CMAKE_CURRENT_LIST_DIR}/debian/triggers
    ${CMAKE_CURRENT_LIST_DIR}/debian/postinst
    ${CMAKE_CURRENT_LIST_DIR}/debian/postrm)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_CONTROL_STRICT_PERMISSION ON)
# The modules are opened at run time, and one whose library is missing is
# passed over (no UCX, no HIP): what they link is recommended, not
# required, so dpkg-shlibdeps (which would require it) does not run on this
# package. What libhetccl.so.0 itself needs on Debian 12 is written here;
# scripts/check-packages.sh checks it against dpkg-shlibdeps.
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SHLIBDEPS OFF)
set(HETCCL_DEB_RUNTIME_DEPENDS
    "libc6 (>= 2.34), libgcc-s1 (>= 3.0), libstdc++6 (>= 12)")
set(CPACK_DEBIAN_RUNTIME_PACKAGE_DEPENDS "${HETCCL_DEB_RUNTIME_DEPENDS}")
set(HETCCL_DEB_RECOMMENDS "")
if(HETCCL_UCX_MODULE_BUILT)
  list(APPEND HETCCL_DEB_RECOMMENDS libucx0)
endif()
if(HETCCL_HIP_MODULE_BUILT)
  list(APPEND HETCCL_DEB_RECOMMENDS libamdhip64-5)
endif()
list(JOIN HETCCL_DEB_RECOMMENDS ", " CPACK_DEBIAN_RUNTIME_PACKAGE_RECOMMENDS)
set(CPACK_DEBIAN_RUNTIME_PACKAGE_SUGGESTS ${HETCCL_DEB_TOOLS})

set(CPACK_DEBIAN_DEV_PACKAGE_NAME ${HETCCL_DEB_DEV})
set(CPACK_DEBIAN_DEV_PACKAGE_SECTION libdevel)
set(CPACK_DEBIAN_DEV_PACKAGE_DEPENDS
    "${HETCCL_DEB_RUNTIME} (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_DEV_DESCRIPTION
"collective communication across NVIDIA, AMD and CPU ranks (development)
The headers of HetCCL (nccl.h of the NCCL 2.28 API, hetccl.h of its
extensions) under include/hetccl, the libhetccl.so link, the CMake
package (find_package(HetCCL): HetCCL::hetccl, HetCCL::nccl,
HetCCL::rccl) and the pkg-config file hetccl.pc.")

set(CPACK_DEBIAN_TOOLS_PACKAGE_NAME ${HETCCL_DEB_TOOLS})
set(CPACK_DEBIAN_TOOLS_PACKAGE_SECTION net)
set(CPACK_DEBIAN_TOOLS_PACKAGE_DEPENDS
    "${HETCCL_DEB_RUNTIME} (= ${PROJECT_VERSION})")
set(CPACK_DEBIAN_TOOLS_DESCRIPTION
"collective communication across NVIDIA, AMD and CPU ranks (tools)
hetccl-run starts a command with HetCCL in place of NCCL or RCCL
(hetccl-run torchrun ..., srun hetccl-run ..., mpirun hetccl-run ...),
hetccl-doctor checks a job's ranks before the job (links, libraries,
every collective), hetccl-perf measures and checks every collective
(nccl-tests style) on CPU and GPU ranks, and hetccl-info reports what
HetCCL finds on a machine.")

include(CPack)
