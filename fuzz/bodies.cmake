# framewalk_fuzz_bodies: the fuzz targets' bodies as a library, shared by the
# libFuzzer binaries (fuzz/CMakeLists.txt) and the regression replay in the
# unit tests (tests/fuzz/replay_test.cpp). Plain C++: builds with gcc too.
include_guard(GLOBAL)

add_library(framewalk_fuzz_bodies STATIC
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_common.cpp
  ${CMAKE_CURRENT_LIST_DIR}/json_check.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_elf_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_cfi_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_expression_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_eh_frame_hdr_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_sframe_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_sframe_roundtrip_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_sframe_generate_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_core_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_unwind_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_archive_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_exidx_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_gmon_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_profile_file_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_line_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_dwarf_info_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_cu_index_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_backend_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_perf_data_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_perf_map_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_jitdump_body.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fuzz_gdb_jit_body.cpp
)
target_include_directories(framewalk_fuzz_bodies PUBLIC ${CMAKE_CURRENT_LIST_DIR})
target_link_libraries(framewalk_fuzz_bodies PUBLIC framewalk framewalk_profile)
