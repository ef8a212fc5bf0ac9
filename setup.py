"""The native GPU launcher, ``tritium.runtime._launch``, is compiled when tritium is installed. It is
optional: without a C compiler tritium installs without it, and GPU targets launch through ctypes
(``tritium.runtime.native_launch``), about 3 µs slower per launch."""

from setuptools import Extension, setup

setup(ext_modules=[Extension("tritium.runtime._launch", ["core/tritium/runtime/_launch.c"], optional=True)])
