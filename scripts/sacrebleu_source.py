# SPDX-License-Identifier: MIT
"""A sacreBLEU source tree (a git checkout, e.g. of v2.6.0) made importable as sacreBLEU 2.6.0:
shared by the scripts that run sacreBLEU from its source. An installed sacreBLEU gets
sacrebleu/version.py from its build; a checkout lacks it, so it is written here."""
import os
import sys

VERSION = "2.6.0"


def prepare(source):
    """Returns `source` as an absolute path, with sacrebleu/version.py present and the tree first
    on sys.path (for `import sacrebleu`; subprocesses take it as PYTHONPATH)."""
    source = os.path.abspath(source)
    package = os.path.join(source, "sacrebleu")
    if not os.path.isdir(package):
        sys.exit(f"error: {source} is not a sacreBLEU source tree (no sacrebleu/ folder)")
    version_file = os.path.join(package, "version.py")
    if not os.path.exists(version_file):
        with open(version_file, "w") as f:
            f.write(f'__version__ = "{VERSION}"\n')
    sys.path.insert(0, source)
    return source
