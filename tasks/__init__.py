"""The steps of a round, each a library of pure functions with a thin Prefect edge:

- ``tasks/augment/``: operators that make new problems (GECA operations 1 and 2, entity substitution,
  reordering, the reverse operation), label verification, one round's generation.
- ``tasks/dbca/``: divergences, the DBCA splitter, MWP atoms and compounds with the one quantity
  labeler, the synthetic SD set; ``steps.py`` holds the split and SD flows' Prefect tasks.
- ``tasks/loop/``: the loop's data sets, run directory, training / evaluation / scoring from files,
  the typed round record; ``steps.py`` holds the loop flow's Prefect tasks.
"""
