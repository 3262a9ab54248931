# The package holds compiled modules (iris_torch._C, libiris_torch.so): its
# wheel is one of this platform and Python, not a pure one (pyproject.toml.in
# says the rest).
from setuptools import setup
from setuptools.dist import Distribution


class CompiledDistribution(Distribution):
    def has_ext_modules(self):
        return True


setup(distclass=CompiledDistribution)
