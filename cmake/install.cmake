# SPDX-License-Identifier: MIT
# The CMake package (docs/package.md). `cmake --install BUILD --prefix P` puts into P, beside the
# apps (bin/) and the SentencePiece shim (<libdir>/nmtzoo/), nmtzoo's shared libraries, its public
# headers (include/nmtzoo/) and <libdir>/cmake/nmtzoo/ (config, version and exported targets), so
# that another CMake project writes
#   find_package(nmtzoo 0.1 REQUIRED)
#   target_link_libraries(my_program PRIVATE nmtzoo::inference)
# Included at the end of the top-level CMakeLists.txt, once every library target exists.
# tests/scripts/cmake_package_test.sh installs a build and builds examples/cpp/ against it.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# One exported target per layer, lowest first, named after it: nmtzoo_models is nmtzoo::models
# (also in this build, as an alias).
set(NMTZOO_PACKAGE_LAYERS common io metrics base kernels models inference train serve)

# The public headers, by the library that implements them; docs/package.md says what each layer
# offers and why the rest is internal. They keep their repository paths under include/nmtzoo/
# (include/nmtzoo/core/search/translator.h), so that they still include each other as
# "core/search/translator.h", and every header a public header includes is public too
# (tests/scripts/cmake_package_test.sh checks that, and that this list is docs/package.md's).
set(NMTZOO_PUBLIC_HEADERS
  # nmtzoo::common: the model section of a config, option values, the keys architectures publish
  common/arch_options.h
  common/model_config.h
  common/option_values.h
  common/tokenizer_choices.h
  # nmtzoo::io
  core/io/text_file.h
  # nmtzoo::metrics: the sacreBLEU 2.6.0 replica
  core/metrics/bleu.h
  core/metrics/bleu_tokenizers.h
  core/metrics/bootstrap_resampling.h
  core/metrics/chrf.h
  core/metrics/corpus_metric.h
  core/metrics/score_report.h
  core/metrics/significance.h
  core/metrics/ter.h
  core/metrics/ter_edit_rate.h
  core/metrics/ter_tokenizer.h
  core/metrics/resampled_metric.h
  # nmtzoo::base: the config schema and loader, text data, the tokenizer front end
  core/config/config.h
  core/config/loader.h
  core/config/schema.h
  core/data/binary_dataset.h
  core/data/corpus.h
  core/data/dataset_prepare.h
  core/data/subword_sampling.h
  core/data/tokenizers.h
  core/data/translation_input.h
  tokenizer/sentencepiece.h
  tokenizer/special_tokens.h
  # nmtzoo::kernels: only the switch
  kernels/kernels.h
  # nmtzoo::models: the modules, EncoderDecoder, the registry, what an architecture declares
  models/arch_options.h
  models/archs.h
  models/attention.h
  models/embedding.h
  models/encoder_decoder.h
  models/functional.h
  models/multihead_attention.h
  models/options/attention_options.h
  models/options/choices.h
  models/options/rnn_options.h
  models/options/transformer_options.h
  models/registry.h
  models/rnn_seq2seq.h
  models/transformer.h
  models/transformer_layer.h
  # nmtzoo::inference: runtime, checkpoints, trained models, the search and the Translator
  core/runtime/checkpoint.h
  core/runtime/runtime.h
  core/runtime/trained_model.h
  core/runtime/weights.h
  core/search/alignment.h
  core/search/ensemble.h
  core/search/translation_pipeline.h
  core/search/search.h
  core/search/translation_json.h
  core/search/translator.h
  # nmtzoo::train: the Trainer and what its header shows, the loss, schedules, distributed
  core/train/checkpoint_folder.h
  core/train/distributed.h
  core/train/engine.h
  core/train/loss.h
  core/train/schedule.h
  core/train/time_budget.h
  core/train/trainer.h
  core/train/training_data.h
  # nmtzoo::serve: the decoding queue (the HTTP half, on Boost.Beast, stays internal)
  core/serve/decoding_queue.h
  core/serve/metrics.h
)

set(NMTZOO_PACKAGE_TARGETS "")
foreach(layer ${NMTZOO_PACKAGE_LAYERS})
  set(target nmtzoo_${layer})
  add_library(nmtzoo::${layer} ALIAS ${target})
  # Installed libraries find each other beside themselves, and LibTorch (or any dependency outside
  # the system's folders, e.g. an official LibTorch) where this build linked it.
  set_target_properties(${target} PROPERTIES
    EXPORT_NAME ${layer}
    INSTALL_RPATH "$ORIGIN"
    INSTALL_RPATH_USE_LINK_PATH TRUE)
  list(APPEND NMTZOO_PACKAGE_TARGETS ${target})
endforeach()
# The public headers are C++17; programs built on them must be too.
target_compile_features(nmtzoo_common PUBLIC cxx_std_17)

# The installed apps find the libraries from bin/ (nmtzoo_app and the two torch-free apps).
file(RELATIVE_PATH nmtzoo_bin_to_lib "${CMAKE_INSTALL_PREFIX}/bin" "${CMAKE_INSTALL_FULL_LIBDIR}")
get_property(nmtzoo_top_targets DIRECTORY "${PROJECT_SOURCE_DIR}" PROPERTY BUILDSYSTEM_TARGETS)
foreach(target ${nmtzoo_top_targets})
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "EXECUTABLE" AND target MATCHES "^nmtzoo-")
    set_target_properties(${target} PROPERTIES
      INSTALL_RPATH "$ORIGIN/${nmtzoo_bin_to_lib}"
      INSTALL_RPATH_USE_LINK_PATH TRUE)
  endif()
endforeach()

install(TARGETS ${NMTZOO_PACKAGE_TARGETS} EXPORT nmtzooTargets
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

foreach(header ${NMTZOO_PUBLIC_HEADERS})
  if(NOT EXISTS "${PROJECT_SOURCE_DIR}/${header}")
    message(FATAL_ERROR "cmake/install.cmake: public header ${header} does not exist")
  endif()
  get_filename_component(folder "${header}" DIRECTORY)
  install(FILES "${PROJECT_SOURCE_DIR}/${header}"
          DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}/nmtzoo/${folder}")
endforeach()

# The package files. Generated in a folder of their own: a nmtzooConfig.cmake at the top of the
# build folder would be found by find_package through a prefix path naming the build folder.
set(NMTZOO_CMAKE_DIR "${CMAKE_INSTALL_LIBDIR}/cmake/nmtzoo")
set(NMTZOO_SPM_SHIM_DIR "${CMAKE_INSTALL_LIBDIR}/nmtzoo")
set(nmtzoo_package_dir "${PROJECT_BINARY_DIR}/cmake/package")
configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/nmtzooConfig.cmake.in"
  "${nmtzoo_package_dir}/nmtzooConfig.cmake"
  INSTALL_DESTINATION "${NMTZOO_CMAKE_DIR}"
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR NMTZOO_SPM_SHIM_DIR)
# While the version is 0.x, a minor version may break the API and the ABI (docs/package.md).
if(PROJECT_VERSION_MAJOR EQUAL 0)
  set(nmtzoo_compatibility SameMinorVersion)
else()
  set(nmtzoo_compatibility SameMajorVersion)
endif()
write_basic_package_version_file("${nmtzoo_package_dir}/nmtzooConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY ${nmtzoo_compatibility})

install(EXPORT nmtzooTargets NAMESPACE nmtzoo:: FILE nmtzooTargets.cmake
        DESTINATION "${NMTZOO_CMAKE_DIR}")
install(FILES "${nmtzoo_package_dir}/nmtzooConfig.cmake"
              "${nmtzoo_package_dir}/nmtzooConfigVersion.cmake"
        DESTINATION "${NMTZOO_CMAKE_DIR}")
