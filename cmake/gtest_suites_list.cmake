# SPDX-License-Identifier: MIT
# Run by cmake -P after each build of a test program (cmake/gtest_suites.cmake): lists its
# GoogleTest suites and writes CTEST_FILE, one ctest test per suite. Inputs: TEST_EXECUTABLE,
# CTEST_FILE, WORKING_DIRECTORY, TIMEOUT (seconds for the listing), LOCKS (Suite=lock,...).
execute_process(COMMAND "${TEST_EXECUTABLE}" --gtest_list_tests
  WORKING_DIRECTORY "${WORKING_DIRECTORY}" TIMEOUT ${TIMEOUT}
  OUTPUT_VARIABLE listing ERROR_VARIABLE errors RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests failed (${status}):\n${errors}")
endif()

string(REPLACE ";" "\\;" listing "${listing}")
string(REPLACE "\n" ";" lines "${listing}")
set(suites "")
foreach(line IN LISTS lines)
  if(line MATCHES "^([^ #][^ ]*)\\.")
    set(suite "${CMAKE_MATCH_1}")
    list(APPEND suites "${suite}")
    set(count_${suite} 0)
  elseif(line MATCHES "^  [^ ]" AND suite)
    math(EXPR count_${suite} "${count_${suite}} + 1")
  endif()
endforeach()
if(NOT suites)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --gtest_list_tests listed no test")
endif()

string(REPLACE "," ";" locks "${LOCKS}")
set(script "")
foreach(suite IN LISTS suites)
  set(lock "")
  foreach(entry IN LISTS locks)
    if(entry MATCHES "^${suite}=(.+)$")
      set(lock " RESOURCE_LOCK ${CMAKE_MATCH_1}")
    endif()
  endforeach()
  # COST: ctest starts the suites with more tests first (it has no timings on a fresh build).
  string(APPEND script
    "add_test([=[${suite}.*]=] \"${TEST_EXECUTABLE}\" [==[--gtest_filter=${suite}.*]==])\n"
    "set_tests_properties([=[${suite}.*]=] PROPERTIES WORKING_DIRECTORY \"${WORKING_DIRECTORY}\" "
    "COST ${count_${suite}}${lock} SKIP_REGULAR_EXPRESSION [==[\\[  SKIPPED \\]]==])\n")
endforeach()
file(WRITE "${CTEST_FILE}.new" "${script}")
file(RENAME "${CTEST_FILE}.new" "${CTEST_FILE}")
