"""The loop of Algorithm 1 (paper 003) from files to files: the run's data sets (``datasets``), the run
directory (``rundir``), training, evaluation and scoring from checkpoints (``training``), the typed
round record (``record``), and the Prefect tasks the loop flow calls (``steps``, the only module here
that imports Prefect)."""
