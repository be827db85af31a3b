"""The loop of Algorithm 1 (paper 003) from files to files: its settings (``config``), the run's data
sets (``datasets``), the run directory (``rundir``), training, evaluation and scoring from checkpoints
(``training``, ``sharding``), the typed round record (``record``), what the user sees while it runs
(``progress``), and its two edges: the Prefect tasks the loop flow calls (``steps``, the only module
here that imports Prefect) and its MLflow records (``tracking``, the only one that imports MLflow)."""
