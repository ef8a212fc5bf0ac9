"""The native launcher, ``tritium_nvptx._launch``, is compiled when the package is installed. It is
optional: without a C compiler the package installs without it and launches through ctypes
(``tritium_nvptx.launch``), about 3 µs slower per launch."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("tritium_nvptx._launch", ["tritium_nvptx/_launch.c"], optional=True)])
