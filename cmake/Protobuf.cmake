# Protocol buffers for the containerd health edge (src/shimkeeper/health/proto/*.proto).
# Debian's protoc (3.21) generates lite-runtime C++ into the build tree; the generated code is
# compiled without our warning flags (it is not ours) into the object library shimkeeper_proto,
# whose objects go into shimkeeper_lib. Headers: "shimkeeper/health/proto/<name>.pb.h".
find_package(Protobuf 3.21 REQUIRED)

set(SHIMKEEPER_PROTO_DIR ${PROJECT_SOURCE_DIR}/src/shimkeeper/health/proto)
set(SHIMKEEPER_PROTO_OUT ${PROJECT_BINARY_DIR}/generated)
file(GLOB _sk_protos CONFIGURE_DEPENDS ${SHIMKEEPER_PROTO_DIR}/*.proto)

set(_sk_proto_sources)
foreach(proto IN LISTS _sk_protos)
  get_filename_component(name ${proto} NAME_WE)
  set(out ${SHIMKEEPER_PROTO_OUT}/shimkeeper/health/proto/${name})
  add_custom_command(
    OUTPUT ${out}.pb.cc ${out}.pb.h
    COMMAND ${CMAKE_COMMAND} -E make_directory ${SHIMKEEPER_PROTO_OUT}/shimkeeper/health/proto
    COMMAND protobuf::protoc
            --proto_path=${PROJECT_SOURCE_DIR}/src
            --cpp_out=${SHIMKEEPER_PROTO_OUT}
            ${proto}
    DEPENDS ${proto} protobuf::protoc
    COMMENT "protoc ${name}.proto"
    VERBATIM)
  list(APPEND _sk_proto_sources ${out}.pb.cc)
endforeach()

add_library(shimkeeper_proto OBJECT ${_sk_proto_sources})
set_target_properties(shimkeeper_proto PROPERTIES POSITION_INDEPENDENT_CODE ON)
target_include_directories(shimkeeper_proto SYSTEM PUBLIC ${SHIMKEEPER_PROTO_OUT})
target_link_libraries(shimkeeper_proto PUBLIC protobuf::libprotobuf-lite)
