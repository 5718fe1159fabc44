"""`python version.py PACKAGE`: the installed version of PACKAGE (for server.toml's [versions.packages])."""

import sys
from importlib.metadata import version

print(version(sys.argv[1]))
