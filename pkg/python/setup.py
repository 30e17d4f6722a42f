"""setup.py — only the wheel's tag; the metadata is in pyproject.toml.

libgpuagg.so is native code that Python never imports as a module: the wheel
works with any Python 3 (py3), needs no Python ABI (none), and runs only on
the platform it was built for.  setuptools would call a package without
extension modules pure (py3-none-any); this says the truth instead.  The
platform is GPUAGG_WHEEL_PLAT (mk/wheel.mk sets it, e.g. linux_x86_64):
"linux" claims no glibc version, which is why the description names the
glibc that the .so needs (auditwheel, which would check a manylinux tag, is
not available offline).
"""

import os
import platform

from setuptools import setup
from setuptools.dist import Distribution
from wheel.bdist_wheel import bdist_wheel


class NativeDistribution(Distribution):
    def has_ext_modules(self):
        return True  # platlib, Root-Is-Purelib: false: it holds a binary


class bdist_wheel_native(bdist_wheel):
    def get_tag(self):
        plat = os.environ.get("GPUAGG_WHEEL_PLAT") or "linux_" + platform.machine()
        return "py3", "none", plat


setup(distclass=NativeDistribution, cmdclass={"bdist_wheel": bdist_wheel_native})
