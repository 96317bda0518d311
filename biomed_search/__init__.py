"""The ``biomed-search`` command line and the offline tools that sit above the service:
the evaluation driver and the GPU planner. They use ``deployments`` (configuration,
in-process wiring, the serve and ingest commands); nothing under ``pipeline/``,
``models/`` or ``deployments/`` imports them."""
