"""A target for tests of the target-neutral stages (defined in a module both test files import)."""

from tritium.target import LaunchOptions, Target


class FrontendOnly(Target):
    """A target that adds no stages: compilation stops after the target-neutral passes."""

    name = "frontend-only"
    binary_stage = "tile-opt"

    def parse_options(self, options):
        return LaunchOptions.parse(options, self.name)

    def add_stages(self, stages, options):
        pass
