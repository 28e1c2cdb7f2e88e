"""Stage 2, the plan (pure): points, measurement settings, load specs, pre-flight, dry run."""

from sizing.plan.points import PlannedPoint, build_plan, parse_cores

__all__ = ["PlannedPoint", "build_plan", "parse_cores"]
