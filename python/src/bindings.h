// SPDX-License-Identifier: MIT
// The pieces of the Python extension nmtzoo._core (python/src/module.cpp puts them together):
// each binds one part of the library into the module it is given.
#pragma once

#include <pybind11/pybind11.h>

// nmtzoo._core.Translator (python/src/translator_bindings.cpp), wrapped by python/nmtzoo/.
void bind_translator(pybind11::module_& m);
// The submodule nmtzoo._core.metrics (python/src/metrics_bindings.cpp), wrapped by the package
// python/nmtzoo/metrics/.
void bind_metrics(pybind11::module_& m);
