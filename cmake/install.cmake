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
# (include/nmtzoo/libtorch/search/translator.h), so that they still include each other as
# "libtorch/search/translator.h", and every header a public header includes is public too
# (tests/scripts/cmake_package_test.sh checks that, and that this list is docs/package.md's).
set(NMTZOO_PUBLIC_HEADERS
  # nmtzoo::common: the model section of a config, option values, the keys architectures publish
  torch_free/common/arch_options.h
  torch_free/common/model_config.h
  torch_free/common/option_values.h
  torch_free/common/tokenizer_choices.h
  # nmtzoo::io
  torch_free/io/text_file.h
  # nmtzoo::metrics: the sacreBLEU 2.6.0 replica
  torch_free/metrics/bleu.h
  torch_free/metrics/bleu_tokenizers.h
  torch_free/metrics/bootstrap_resampling.h
  torch_free/metrics/chrf.h
  torch_free/metrics/corpus_metric.h
  torch_free/metrics/score_report.h
  torch_free/metrics/significance.h
  torch_free/metrics/ter.h
  torch_free/metrics/ter_edit_rate.h
  torch_free/metrics/ter_tokenizer.h
  torch_free/metrics/resampled_metric.h
  # nmtzoo::base: the config schema and loader, text data, the tokenizer front end
  torch_free/config/config.h
  torch_free/config/loader.h
  torch_free/config/schema.h
  torch_free/data/binary_dataset.h
  torch_free/data/corpus.h
  torch_free/data/dataset_prepare.h
  torch_free/data/subword_sampling.h
  torch_free/data/tokenizers.h
  torch_free/data/translation_input.h
  torch_free/tokenizer/sentencepiece.h
  torch_free/tokenizer/special_tokens.h
  # nmtzoo::kernels: only the switch
  libtorch/kernels/kernels.h
  # nmtzoo::models: the modules, EncoderDecoder, the registry, what an architecture declares
  torch_free/archs/arch_options.h
  torch_free/archs/archs.h
  libtorch/models/attention.h
  libtorch/models/embedding.h
  libtorch/models/encoder_decoder.h
  libtorch/models/functional.h
  libtorch/models/multihead_attention.h
  torch_free/archs/options/attention_options.h
  torch_free/archs/options/choices.h
  torch_free/archs/options/rnn_options.h
  torch_free/archs/options/transformer_options.h
  torch_free/archs/registry.h
  libtorch/models/rnn_seq2seq.h
  libtorch/models/transformer.h
  libtorch/models/transformer_layer.h
  # nmtzoo::inference: runtime, checkpoints, trained models, the search and the Translator
  libtorch/runtime/checkpoint.h
  libtorch/runtime/runtime.h
  libtorch/runtime/trained_model.h
  libtorch/runtime/weights.h
  libtorch/search/alignment.h
  libtorch/search/ensemble.h
  libtorch/search/translation_pipeline.h
  libtorch/search/search.h
  libtorch/search/translation_json.h
  libtorch/search/translator.h
  # nmtzoo::train: the Trainer and what its header shows, the loss, schedules, distributed
  libtorch/train/checkpoint_folder.h
  libtorch/train/distributed.h
  libtorch/train/engine.h
  libtorch/train/loss.h
  libtorch/train/schedule.h
  libtorch/train/time_budget.h
  libtorch/train/trainer.h
  libtorch/train/training_data.h
  # nmtzoo::serve: the decoding queue (the HTTP half, on Boost.Beast, stays internal)
  libtorch/serve/decoding_queue.h
  libtorch/serve/metrics.h
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
