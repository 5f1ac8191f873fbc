# SPDX-License-Identifier: MIT
# The Debian package (docs/package.md#debian-package). In a build folder,
#   cpack -G DEB            (or cpack --config BUILD/CPackConfig.cmake -G DEB -B OUT)
# makes nmtzoo_<version>_<arch>.deb of exactly what `cmake --install` installs, with prefix /usr:
# the apps, the shared libraries, the SentencePiece shim, the public headers, the CMake package and
# the Python module. One package, not a Debian split (docs/package.md says why). Its Depends are
# dpkg-shlibdeps' reading of every ELF file in it (LibTorch, fmt, yaml-cpp, ... and, through the
# shim, libsentencepiece0) plus python3 3.X for the module; what a program built on the headers needs
# is suggested. Included by the top-level CMakeLists.txt after cmake/install.cmake.
# tests/scripts/deb_package_test.sh builds the package from a build and checks it with lintian.
#
# Libraries land in /usr/<libdir>: /usr/lib/x86_64-linux-gnu when the build was configured with
# -DCMAKE_INSTALL_PREFIX=/usr (GNUInstallDirs' Debian layout), /usr/lib otherwise. Either works;
# their $ORIGIN run paths are relative, which lintian accepts. A build against a LibTorch outside
# the system's folders (an official CUDA LibTorch) cannot make a valid package: no Debian package
# provides that LibTorch, and its folder would be in the run paths.
set(nmtzoo_debian_dir "${PROJECT_SOURCE_DIR}/packaging/debian")

if(Torch_DIR AND NOT Torch_DIR MATCHES "^/usr/lib/")
  message(STATUS "Debian package: LibTorch comes from ${Torch_DIR}, not from a Debian package: "
    "`cpack -G DEB` would make a package lintian rejects (run path outside /usr)")
endif()

# /usr/share/doc/nmtzoo: the copyright file and the changelog, gzip -9n'd (no name, no time stamp,
# so the same changelog gives the same bytes). The version has no Debian revision, so this is a
# native package and the Debian-format changelog is changelog.gz, not changelog.Debian.gz.
set(nmtzoo_changelog "${nmtzoo_debian_dir}/changelog")
set(nmtzoo_changelog_gz "${PROJECT_BINARY_DIR}/cmake/debian/changelog.gz")
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${nmtzoo_changelog}")
file(MAKE_DIRECTORY "${PROJECT_BINARY_DIR}/cmake/debian")
execute_process(COMMAND gzip -9 -n -c "${nmtzoo_changelog}"
  OUTPUT_FILE "${nmtzoo_changelog_gz}" RESULT_VARIABLE nmtzoo_gzip_result)
if(NOT nmtzoo_gzip_result EQUAL 0)
  message(FATAL_ERROR "cmake/debian_package.cmake: gzip ${nmtzoo_changelog}: ${nmtzoo_gzip_result}")
endif()
file(STRINGS "${nmtzoo_changelog}" nmtzoo_changelog_top LIMIT_COUNT 1)
if(NOT nmtzoo_changelog_top MATCHES "^nmtzoo \\(${PROJECT_VERSION}\\) ")
  message(WARNING "packaging/debian/changelog: its latest entry is '${nmtzoo_changelog_top}', not "
    "version ${PROJECT_VERSION}; add an entry before making a Debian package")
endif()
install(FILES "${nmtzoo_debian_dir}/copyright" "${nmtzoo_changelog_gz}"
        DESTINATION "${CMAKE_INSTALL_DOCDIR}")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME nmtzoo)
set(CPACK_PACKAGE_VENDOR "nmtzoo maintainers")
set(CPACK_PACKAGE_CONTACT "nmtzoo maintainers <maintainers@users.noreply.a-seed-a5e6f80d.example>")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "neural machine translation toolkit on LibTorch")
set(CPACK_PACKAGE_DESCRIPTION "\
nmtzoo trains and runs neural machine translation models (Transformer and
attentional RNN) on LibTorch, on the CPU or a GPU: data preparation with
SentencePiece, training, beam search, ensembles, a translation server and
BLEU, chrF and TER scoring as sacreBLEU computes them.
.
This package holds the nmtzoo-* programs, the shared libraries they are
built on, the public C++ headers with the CMake package nmtzoo (for
find_package), and the Python module nmtzoo. Building a program against
the headers also needs the packages this one suggests.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
# Directories the install creates without saying how: 0755 whatever the umask.
set(CPACK_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS
    OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ WORLD_EXECUTE)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # nmtzoo_0.1.0_amd64.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
# What no ELF file says: the Python the module's extension (python/, for one Python 3.X ABI) was
# built for, bounded as dh_python3 bounds an extension's. dpkg-shlibdeps adds the rest; the shim is
# an ELF file of the package too, so its libsentencepiece0 is among them though nothing links it.
if(TARGET nmtzoo_python AND DEFINED Python3_VERSION_MINOR)
  math(EXPR nmtzoo_next_python_minor "${Python3_VERSION_MINOR} + 1")
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3 (>= 3.${Python3_VERSION_MINOR}~), \
python3 (<< 3.${nmtzoo_next_python_minor})")
elseif(TARGET nmtzoo_python)
  set(CPACK_DEBIAN_PACKAGE_DEPENDS "python3")
endif()
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The package's own libraries, for dpkg-shlibdeps to find when it reads the apps (the $ORIGIN run
# paths find them too; this keeps shlibdeps working if a build drops them). Relative to the
# staging root, where CPack runs dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS_PRIVATE_DIRS "usr/${CMAKE_INSTALL_LIBDIR}"
    "usr/${CMAKE_INSTALL_LIBDIR}/nmtzoo")
# DEBIAN/shlibs for the libraries with a soname (not the shim, which has none): a program built
# against libnmtzoo_X.so.0.1 needs this package at this version or a later one with that soname.
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS ON)
set(CPACK_DEBIAN_PACKAGE_GENERATE_SHLIBS_POLICY ">=")
# What find_package(nmtzoo) finds with find_dependency, and a compiler and CMake to use them.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS
    "cmake, g++, libtorch-dev, libfmt-dev, libyaml-cpp-dev, nlohmann-json3-dev")
# The ldconfig trigger (lintian's error lacks-ldconfig-trigger without it), and the module's
# byte-compiling on install and cleaning on removal, as dh_python3 writes them. Our postinst
# replaces the one CPack would write to call ldconfig; CPack still writes a postrm calling it
# (lintian: warning maintscript-calls-ldconfig, redundant with the trigger but harmless).
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${nmtzoo_debian_dir}/triggers"
    "${nmtzoo_debian_dir}/postinst" "${nmtzoo_debian_dir}/prerm")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
