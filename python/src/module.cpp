// SPDX-License-Identifier: MIT
// The Python extension nmtzoo._core; the package python/nmtzoo/ gives it its Python face.
#include <pybind11/pybind11.h>

#include "python/src/bindings.h"

PYBIND11_MODULE(_core, m) {
  m.doc() = "nmtzoo's C++ library: the Translator and the metrics (use the nmtzoo package)";
  m.attr("__version__") = NMTZOO_VERSION;
  bind_translator(m);
  bind_metrics(m);
}
