"""Stage 4, measure: load windows -> a PointResult and its samples.

Never the store and never the sweep: a measurement method gets a
:class:`~sizing.measure.measure_context.MeasureContext`, a point and its prepared target.
"""
