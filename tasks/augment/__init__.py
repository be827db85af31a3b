"""The augmentation library: operators that make new problems from a pool (GECA operations 1 and 2
over a hashed fragment index, entity substitution, problem reordering, the reverse operation), label
verification, and one round's generation (``generate.generate_candidates``). Pure: no Prefect, no
MLflow. Add an operator: a module here with ``operator(problems, config, seed, round)``, one line in
``registry.OPERATORS``, a test in tests/tasks/augment/."""
