# SPDX-License-Identifier: MIT
# The precompiled <torch/torch.h>, and who gets it (docs/development.md#how-the-build-is-organised).
#
# Measured on the reference 2-core machine (g++ 12, -O3, CPU seconds for a file with nothing else
# in it): parsing <torch/torch.h> costs 22 s, loading its precompiled form (571 MB) 10 s,
# <ATen/core/Tensor.h> 3 s. The precompiled header pays off only in a file that includes
# <torch/torch.h>; in a torch-free file, or one that needs only <ATen/core/Tensor.h>, it is 10 s
# lost. So in a target built file by file (the programs), a source gets it only when it includes
# <torch/torch.h> itself, which this file reads at configure time; a file that starts including
# it after the configure still builds (parsing the header) and gets it at the next configure. In
# a unity build (the libraries, the tests) every batch gets it: its cost is shared by the batch.
#
# GCC refuses a precompiled header made with other -fpic/-fpie, OpenMP or optimisation macros:
# one is made for everything built with -fPIC and without OpenMP: the libraries, and the programs
# and tests, which are compiled with -fPIC for it (the kernels, with OpenMP, go without).

file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/torch_pch.cpp
  CONTENT "// Makes the shared precompiled <torch/torch.h> (cmake/torch_pch.cmake).\n")
add_library(nmtzoo_torch_pch OBJECT ${CMAKE_BINARY_DIR}/torch_pch.cpp)
set_target_properties(nmtzoo_torch_pch PROPERTIES POSITION_INDEPENDENT_CODE ON)
# The definitions LibTorch's and fmt's targets bring, which every consumer has too.
target_link_libraries(nmtzoo_torch_pch PRIVATE ${TORCH_LIBRARIES} fmt::fmt)
target_precompile_headers(nmtzoo_torch_pch PRIVATE <torch/torch.h>)

# Marks the sources of TARGET that do not include <torch/torch.h> as not using its precompiled
# header.
function(nmtzoo_skip_pch_without_torch target)
  get_target_property(sources ${target} SOURCES)
  get_target_property(source_dir ${target} SOURCE_DIR)
  foreach(source IN LISTS sources)
    if(IS_ABSOLUTE "${source}")
      set(path "${source}")
    else()
      set(path "${source_dir}/${source}")
    endif()
    file(STRINGS "${path}" torch_include REGEX "^#include <torch/torch\\.h>" LIMIT_COUNT 1)
    if(NOT torch_include)
      set_source_files_properties("${source}" TARGET_DIRECTORY ${target}
        PROPERTIES SKIP_PRECOMPILE_HEADERS ON)
    endif()
  endforeach()
endfunction()

# TARGET shares the precompiled <torch/torch.h>; an executable is compiled with -fPIC for it.
function(nmtzoo_reuse_torch_pch target)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE")
    target_compile_options(${target} PRIVATE -fPIC)
  endif()
  target_precompile_headers(${target} REUSE_FROM nmtzoo_torch_pch)
  get_target_property(unity ${target} UNITY_BUILD)
  if(NOT unity)
    nmtzoo_skip_pch_without_torch(${target})
  endif()
endfunction()
