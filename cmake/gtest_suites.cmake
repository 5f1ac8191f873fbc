# SPDX-License-Identifier: MIT
# One ctest test per GoogleTest suite of a test program: `Suite.*`, which runs the suite's tests in
# one process. GoogleTest's own gtest_discover_tests makes one process per test, and a program that
# loads LibTorch spends ~0.65 s starting before its first test (LibTorch's static initialisation,
# measured): over the LibTorch program's 554 tests, 6 of the 23 minutes of CPU ctest spent.
# A test still fails by its own name in the output (GoogleTest prints each), and
# `nmtzoo_torch_tests --gtest_filter=Suite.Name` runs one alone.
#
#   nmtzoo_add_gtest_suites(TARGET [DISCOVERY_TIMEOUT seconds] [LOCKS Suite=lock ...])
#
# LOCKS: suites that must not run beside each other share a ctest RESOURCE_LOCK (e.g. one that
# opens thousands of loopback connections, and one that needs a free port to stay free).
#
# Like gtest_discover_tests, the suites are listed after each build of TARGET (its
# --gtest_list_tests) into a file ctest includes, so a new suite needs no CMake change.
# tests/scripts/test_names_test.sh checks that every test of tests/test_names.txt still runs.

set(NMTZOO_GTEST_SUITES_SCRIPT "${CMAKE_CURRENT_LIST_DIR}/gtest_suites_list.cmake")

function(nmtzoo_add_gtest_suites target)
  cmake_parse_arguments(arg "" "DISCOVERY_TIMEOUT" "LOCKS" ${ARGN})
  string(REPLACE ";" "," locks "${arg_LOCKS}")
  if(NOT arg_DISCOVERY_TIMEOUT)
    set(arg_DISCOVERY_TIMEOUT 60)
  endif()
  set(ctest_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites.cmake")
  add_custom_command(TARGET ${target} POST_BUILD
    COMMAND "${CMAKE_COMMAND}" -D "TEST_EXECUTABLE=$<TARGET_FILE:${target}>"
            -D "CTEST_FILE=${ctest_file}" -D "WORKING_DIRECTORY=${CMAKE_CURRENT_BINARY_DIR}"
            -D "TIMEOUT=${arg_DISCOVERY_TIMEOUT}" -D "LOCKS=${locks}" -P "${NMTZOO_GTEST_SUITES_SCRIPT}"
    BYPRODUCTS "${ctest_file}"
    VERBATIM)
  set(include_file "${CMAKE_CURRENT_BINARY_DIR}/${target}_suites_include.cmake")
  file(WRITE "${include_file}"
    "if(EXISTS \"${ctest_file}\")\n"
    "  include(\"${ctest_file}\")\n"
    "else()\n"
    "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${include_file}")
endfunction()
