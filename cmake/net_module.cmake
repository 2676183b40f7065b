# The net transport module, libhetccl-net.so: it loads NCCL network plugins
# (libnccl-net*.so) and speaks their ABI, which HetCCL declares itself
# (src/transport/net/module/net_plugin_abi.h), so it needs no outside
# header and is always built. The core never links it: it dlopens the
# module at the first communicator that uses the net transport. It lands in
# the build's src/ directory, next to libnccl.so.2, and installs beside
# libhetccl.

set(HETCCL_NET_MODULE_EXPORTS ${PROJECT_BINARY_DIR}/net_module_exports.map)
file(CONFIGURE OUTPUT ${HETCCL_NET_MODULE_EXPORTS}
     CONTENT "{\n  global: hetcclNetModule;\n  local: *;\n};\n")
add_library(hetccl_net SHARED
  ${PROJECT_SOURCE_DIR}/src/transport/net/module/net_module.cc)
target_include_directories(hetccl_net PRIVATE ${PROJECT_SOURCE_DIR}/src)
target_link_libraries(hetccl_net PRIVATE ${CMAKE_DL_LIBS})
# Plain (unsanitised) like the UCX module: a plugin is built without the
# sanitizers, and a sanitised module between it and the core gains nothing.
set_target_properties(hetccl_net PROPERTIES
  COMPILE_OPTIONS "-Wall;-Wextra;-Wno-unused-parameter"
  LINK_OPTIONS ""
  CXX_VISIBILITY_PRESET hidden
  OUTPUT_NAME hetccl-net
  LIBRARY_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/src
  LINK_DEPENDS ${HETCCL_NET_MODULE_EXPORTS})
target_link_options(hetccl_net PRIVATE
  -Wl,--version-script=${HETCCL_NET_MODULE_EXPORTS} -Wl,--no-undefined)
