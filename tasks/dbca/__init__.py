"""DBCA (distribution-based compositional assessment) for math word problems: the divergences, the
generic greedy splitter, what an MWP atom and compound are (quantity clusters and their labeler), the
synthetic SD data set, and the Prefect tasks of the split and SD flows (:mod:`tasks.dbca.steps`, the
only module here that imports Prefect)."""
